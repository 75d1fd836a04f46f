import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { schemaProblems } from '../shared/schema-problems';

/** Longest wait for one remote task, unless an agent's `timeoutMs` says otherwise: 10 minutes. */
export const DEFAULT_REMOTE_TASK_TIMEOUT_MS = 600_000;

/** A remote agent's name is its tool's name: letters, digits, `-` and `_`, as every provider takes. */
const AgentNameSchema = z
  .string()
  .regex(/^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/, 'a letter, then up to 63 letters, digits, - and _');

/**
 * One remote A2A agent: where its card is, and the environment variable holding the bearer token its
 * calls carry (the secret itself never sits in the configuration). Unknown keys are refused, so a
 * misspelt `tokenEnv` does not silently send calls without a token.
 */
export const RemoteAgentConfigSchema = z.strictObject({
  /** The agent card's URL (http or https); every call goes to the card's JSON-RPC interface on the same origin. */
  card: z
    .string()
    .url()
    .refine((url) => /^https?:$/.test(new URL(url).protocol), 'an http or https URL'),
  /** The environment variable holding the bearer token; calls carry none when absent. */
  tokenEnv: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name')
    .optional(),
  /** Longest wait for one task, ms; default 600000. */
  timeoutMs: z.number().int().min(1_000).max(86_400_000).optional(),
});
export type RemoteAgentConfig = z.infer<typeof RemoteAgentConfigSchema>;

export const RemoteAgentsConfigSchema = z.record(AgentNameSchema, RemoteAgentConfigSchema);

/** A configured remote agent, its token read from the environment. */
export interface RemoteAgent {
  /** The tool's name. */
  name: string;
  /** Where its agent card is read from. */
  cardUrl: string;
  /** The bearer token every call carries, from the variable its `tokenEnv` names. */
  token?: string;
  /** How long one call may wait for the remote task, ms. */
  timeoutMs: number;
}

/**
 * The remote A2A agents of `DURABLE_AGENT_A2A_AGENTS` (the JSON itself) or
 * `DURABLE_AGENT_A2A_AGENTS_FILE` (a file holding it): `{ "name": { "card", "tokenEnv"?, "timeoutMs"? } }`.
 * None when neither is set. A bad value, an unknown key, or a `tokenEnv` naming an unset variable is
 * an error naming it, so a worker never starts with an agent it cannot call.
 */
export function remoteAgentsFromEnv(env: NodeJS.ProcessEnv): RemoteAgent[] {
  const inline = env.DURABLE_AGENT_A2A_AGENTS;
  const file = env.DURABLE_AGENT_A2A_AGENTS_FILE;
  if (inline && file)
    throw new Error('set DURABLE_AGENT_A2A_AGENTS or DURABLE_AGENT_A2A_AGENTS_FILE, not both');
  const [name, text] = inline
    ? ['DURABLE_AGENT_A2A_AGENTS', inline]
    : file
      ? [`DURABLE_AGENT_A2A_AGENTS_FILE (${file})`, readFileSync(file, 'utf8')]
      : [undefined, undefined];
  if (!name) return [];
  let json: unknown;
  try {
    json = JSON.parse(text!);
  } catch (error) {
    throw new Error(`${name} is not JSON: ${(error as Error).message}`);
  }
  const parsed = RemoteAgentsConfigSchema.safeParse(json);
  if (!parsed.success)
    throw new Error(`${name} is not a valid A2A agent list: ${schemaProblems(parsed.error)}`);
  return Object.entries(parsed.data).map(([agent, config]) => {
    const token = config.tokenEnv === undefined ? undefined : env[config.tokenEnv];
    if (config.tokenEnv !== undefined && !token)
      throw new Error(`${name}: agent ${agent} takes its token from ${config.tokenEnv}, which is not set`);
    return {
      name: agent,
      cardUrl: config.card,
      ...(token ? { token } : {}),
      timeoutMs: config.timeoutMs ?? DEFAULT_REMOTE_TASK_TIMEOUT_MS,
    };
  });
}
