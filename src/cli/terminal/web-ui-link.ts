import type { ConnectionSettings } from '../../shared/connection-settings';

/**
 * Where a conversation is in the Temporal Web UI: under DURABLE_AGENT_WEB_UI_URL when set (a
 * deployment's UI), else the embedded server's UI when that is the server in use. Undefined for a
 * server whose UI this process cannot know.
 */
export function webUiLink(
  settings: ConnectionSettings,
  conversationId: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const configured = env.DURABLE_AGENT_WEB_UI_URL?.replace(/\/+$/, '');
  const base =
    configured || (settings.address ? undefined : `http://127.0.0.1:${env.DURABLE_AGENT_UI_PORT || 8233}`);
  if (!base) return undefined;
  return `${base}/namespaces/${encodeURIComponent(settings.namespace)}/workflows/${encodeURIComponent(conversationId)}`;
}
