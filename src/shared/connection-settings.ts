import { z } from 'zod';
import { DEFAULT_TASK_QUEUE } from './constants';

/** How to reach Temporal, read from the same environment variables the `temporal` CLI uses. */
export const ConnectionSettingsSchema = z.object({
  /** host:port of a Temporal frontend; when absent the embedded Temporal server is used. */
  address: z.string().min(1).optional(),
  /** The Temporal namespace (TEMPORAL_NAMESPACE); `default` when absent. */
  namespace: z.string().min(1).default('default'),
  /** The task queue workers poll and conversations run on (AGENT_TASK_QUEUE). */
  taskQueue: z.string().min(1).default(DEFAULT_TASK_QUEUE),
  /** An API key, e.g. for Temporal Cloud (TEMPORAL_API_KEY); it implies TLS unless `tls` is false. */
  apiKey: z.string().min(1).optional(),
  /** Connect over TLS (TEMPORAL_TLS); by default when an API key, a client certificate or a CA is given. */
  tls: z.boolean().optional(),
  /** The client certificate for mTLS, a PEM file (TEMPORAL_TLS_CERT). */
  tlsCertPath: z.string().optional(),
  /** The client certificate's key, a PEM file (TEMPORAL_TLS_KEY). */
  tlsKeyPath: z.string().optional(),
  /** The CA to verify the server with, a PEM file (TEMPORAL_TLS_CA). */
  tlsCaPath: z.string().optional(),
  /** The server name to verify the server's certificate against (TEMPORAL_TLS_SERVER_NAME). */
  tlsServerName: z.string().optional(),
  /** How long a worker or the CLI waits for a Temporal server that is still starting. */
  serverWaitMs: z.number().int().min(0).default(60_000),
});
export type ConnectionSettings = z.infer<typeof ConnectionSettingsSchema>;

const flag = (value: string | undefined) =>
  value === undefined || value === '' ? undefined : /^(1|true|yes)$/i.test(value);
const text = (value: string | undefined) => (value === undefined || value === '' ? undefined : value);

const wholeNumber = (env: NodeJS.ProcessEnv, name: string) => {
  const value = text(env[name]);
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new Error(`${name} must be a whole number of milliseconds, got ${value}`);
  return Number(value);
};

export function connectionSettingsFromEnv(env: NodeJS.ProcessEnv): ConnectionSettings {
  return ConnectionSettingsSchema.parse({
    address: text(env.TEMPORAL_ADDRESS),
    namespace: text(env.TEMPORAL_NAMESPACE),
    taskQueue: text(env.AGENT_TASK_QUEUE),
    apiKey: text(env.TEMPORAL_API_KEY),
    tls: flag(env.TEMPORAL_TLS),
    tlsCertPath: text(env.TEMPORAL_TLS_CERT),
    tlsKeyPath: text(env.TEMPORAL_TLS_KEY),
    tlsCaPath: text(env.TEMPORAL_TLS_CA),
    tlsServerName: text(env.TEMPORAL_TLS_SERVER_NAME),
    serverWaitMs: wholeNumber(env, 'DURABLE_AGENT_SERVER_WAIT_MS'),
  });
}
