import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { schemaProblems } from '../../shared/schema-problems';

const PortSchema = z.number().int().min(1).max(65_535);

const ServiceStateSchema = z.strictObject({
  grpcPort: PortSchema,
  membershipPort: PortSchema,
  /** The process last started for the service; it may have died since. */
  pid: z.number().int().positive().optional(),
});
export type ServiceState = z.infer<typeof ServiceStateSchema>;

/** What a cluster directory remembers between commands, so `start` again reuses its ports. */
export const ClusterStateSchema = z.strictObject({
  version: z.literal(1),
  postgresPort: PortSchema,
  /** The frontend's HTTP API (Temporal's 7243): kept, as the cluster record in PostgreSQL names it. */
  frontendHttpPort: PortSchema,
  /** The address Temporal's services listen on (`cluster start --host`); 127.0.0.1 when absent. */
  host: z.ipv4().optional(),
  /** Whether the services serve mTLS with the certificates in DIR/tls (`cluster start --tls`). */
  tls: z.boolean().optional(),
  /** The Temporal server version whose schema the databases were brought up to. */
  schemaVersion: z.string().optional(),
  services: z.strictObject({
    frontend: ServiceStateSchema,
    history: ServiceStateSchema,
    matching: ServiceStateSchema,
    worker: ServiceStateSchema,
  }),
});
export type ClusterState = z.infer<typeof ClusterStateSchema>;

/** Where the services of a cluster listen: the address it was started with, else 127.0.0.1. */
export function serviceHost(state: ClusterState): string {
  return state.host ?? '127.0.0.1';
}

/** The state recorded in `file`, or undefined when there is none yet. */
export async function readClusterState(file: string): Promise<ClusterState | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new Error(`${file} is not JSON (${(error as Error).message}): remove it to start afresh`);
  }
  const parsed = ClusterStateSchema.safeParse(json);
  if (!parsed.success) throw new Error(`${file} is not a cluster state: ${schemaProblems(parsed.error)}`);
  return parsed.data;
}

/** Replaces the state whole: a reader never sees half of it. */
export async function writeClusterState(file: string, state: ClusterState): Promise<void> {
  const scratch = `${file}.${randomBytes(4).toString('hex')}`;
  try {
    await writeFile(scratch, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
    await rename(scratch, file);
  } finally {
    await rm(scratch, { force: true });
  }
}
