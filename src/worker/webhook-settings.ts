import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { type WebhookConfig, WebhookFileSchema, type WebhookTarget } from '../shared/webhooks';

/** A webhook's id: the same URL gives the same id on every worker, without putting the URL in history. */
export function webhookId(url: string): string {
  return createHash('sha256').update(url).digest('hex').slice(0, 16);
}

/** DURABLE_AGENT_WEBHOOKS: a JSON file `{ "webhooks": [{ "url", "events", "secret" }] }`; none when unset. */
export function webhooksFromEnv(env: NodeJS.ProcessEnv): WebhookConfig[] {
  const file = env.DURABLE_AGENT_WEBHOOKS?.trim();
  if (!file) return [];
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`DURABLE_AGENT_WEBHOOKS: cannot read ${file}: ${(error as Error).message}`);
  }
  const parsed = WebhookFileSchema.safeParse(json);
  if (!parsed.success) throw new Error(`DURABLE_AGENT_WEBHOOKS: ${file} is wrong: ${parsed.error.message}`);
  return parsed.data.webhooks;
}

export function webhookTargets(webhooks: readonly WebhookConfig[]): WebhookTarget[] {
  return webhooks.map((hook) => ({ id: webhookId(hook.url), events: hook.events }));
}
