import { readFileSync } from 'node:fs';
import { schemaProblems } from '../shared/schema-problems';
import { type WebhookConfig, WebhookFileSchema } from '../shared/webhooks';

/** DURABLE_AGENT_WEBHOOKS: a JSON file `{ "webhooks": [{ "url", "events", "secret" }] }` (no other keys); none when unset. */
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
  if (!parsed.success)
    throw new Error(`DURABLE_AGENT_WEBHOOKS: ${file} is wrong: ${schemaProblems(parsed.error)}`);
  return parsed.data.webhooks;
}
