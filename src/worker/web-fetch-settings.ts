import type { WebFetchOptions } from '../tools/builtin/web-fetch';

/**
 * AGENT_WEB_FETCH_ALLOW_HOSTS: comma-separated host names `web_fetch` reaches without asking (exact
 * names, no patterns or ports). A fetch from any other host waits for approval.
 */
export function webFetchOptionsFromEnv(env: NodeJS.ProcessEnv): WebFetchOptions {
  const hosts = (env.AGENT_WEB_FETCH_ALLOW_HOSTS ?? '')
    .split(',')
    .map((host) => host.trim().toLowerCase().replace(/\.$/, ''))
    .filter(Boolean);
  for (const host of hosts) {
    if (!/^([a-z0-9-]+\.)*[a-z0-9-]+$/.test(host) && !/^\[[0-9a-f:.]+\]$/.test(host)) {
      throw new Error(
        `AGENT_WEB_FETCH_ALLOW_HOSTS names hosts (docs.python.org, [::1]), not URLs, ports or patterns: ${JSON.stringify(host)}`,
      );
    }
  }
  return { allowHosts: hosts };
}
