import { z } from 'zod';
import { DEFAULT_TASK_QUEUE } from './constants';

/** A PEM the connection reads: a file, or its text given inline (a profile's `*_data`, a `*_DATA` variable). */
export const PemSourceSchema = z.union([
  z.strictObject({
    /** The file holding the PEM. */
    path: z.string().min(1),
  }),
  z.strictObject({
    /** The PEM itself. */
    data: z.union([z.string(), z.instanceof(Uint8Array)]),
  }),
]);
/** A PEM the connection reads: a file, or its text given inline. */
export type PemSource = z.infer<typeof PemSourceSchema>;

/** TLS to the Temporal frontend, as Temporal's client configuration has it. */
export const ConnectionTlsSchema = z.strictObject({
  /** TLS off even where an API key would turn it on (`TEMPORAL_TLS=false`, a profile's `tls.disabled`). */
  disabled: z.boolean().optional(),
  /** The name the server's certificate is checked against, when not the address's host. */
  serverName: z.string().optional(),
  /** The client certificate for mTLS. */
  clientCert: PemSourceSchema.optional(),
  /** The client certificate's private key. */
  clientKey: PemSourceSchema.optional(),
  /** The CA the server's certificate is checked with, when not one the system trusts. */
  serverCACert: PemSourceSchema.optional(),
});
/** TLS to the Temporal frontend. */
export type ConnectionTls = z.infer<typeof ConnectionTlsSchema>;

/**
 * How to reach Temporal: Temporal's client configuration (a profile of `temporal.toml` and the
 * standard TEMPORAL_* variables, read as the `temporal` CLI and the SDKs read them) plus the task
 * queue and the wait for a server still starting.
 */
export const ConnectionSettingsSchema = z.object({
  /** host:port of a Temporal frontend; when absent the embedded Temporal server is used. */
  address: z.string().min(1).optional(),
  /** The Temporal namespace; `default` when absent. */
  namespace: z.string().min(1).default('default'),
  /** The task queue workers poll and conversations run on (AGENT_TASK_QUEUE). */
  taskQueue: z.string().min(1).default(DEFAULT_TASK_QUEUE),
  /** An API key, e.g. for Temporal Cloud; it implies TLS unless TLS is disabled. */
  apiKey: z.string().min(1).optional(),
  /** TLS settings; TLS is on when they are present (and not disabled) or an API key is given. */
  tls: ConnectionTlsSchema.optional(),
  /** gRPC headers sent with every call (a profile's `grpc_meta`, TEMPORAL_GRPC_META_*). */
  grpcMeta: z.record(z.string(), z.string()).optional(),
  /** Where the settings came from, for messages: the profile and file, or the environment alone. */
  source: z.string().default('the environment'),
  /** How long a worker or the CLI waits for a Temporal server that is still starting. */
  serverWaitMs: z.number().int().min(0).default(60_000),
});
/** How to reach Temporal: the connection, the task queue, the wait for a server still starting. */
export type ConnectionSettings = z.infer<typeof ConnectionSettingsSchema>;
export type ConnectionSettingsInput = z.input<typeof ConnectionSettingsSchema>;

/** Whether connections made with `settings` use TLS. */
export function usesTls(settings: Pick<ConnectionSettings, 'tls' | 'apiKey'>): boolean {
  if (settings.tls) return settings.tls.disabled !== true;
  return settings.apiKey !== undefined;
}
