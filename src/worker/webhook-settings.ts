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

/**
 * DURABLE_AGENT_A2A_PUSH_ALLOW_PRIVATE=1: A2A push notifications may reach loopback, private and
 * link-local addresses (a receiver on the operator's own network). Off by default: a push URL is
 * an A2A caller's, and would otherwise reach what only the worker should.
 */
export function a2aPushAllowPrivateFromEnv(env: NodeJS.ProcessEnv): boolean {
  const value = env.DURABLE_AGENT_A2A_PUSH_ALLOW_PRIVATE?.trim().toLowerCase();
  return value === '1' || value === 'true';
}
