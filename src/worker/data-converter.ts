import type { DataConverter } from '@temporalio/common';
import { blobStoreFromEnv } from './blob-store-from-env';
import { DEFAULT_PAYLOAD_LIMITS, LargePayloadCodec, type LargePayloadLimits } from './large-payload-codec';

/**
 * The data converter every worker and client of durable-agent uses: the default JSON conversion
 * plus the large-payload codec. Clients that talk to conversations (AgentClient included) need it
 * too, with the same blob store (blob-store-from-env.ts), to read what workers wrote.
 */
export function agentDataConverter(env: NodeJS.ProcessEnv = process.env): DataConverter {
  return { payloadCodecs: [new LargePayloadCodec(blobStoreFromEnv(env), limitsFrom(env))] };
}

function limitsFrom(env: NodeJS.ProcessEnv): LargePayloadLimits {
  return {
    compressAboveBytes: bytes(
      env,
      'DURABLE_AGENT_COMPRESS_ABOVE_BYTES',
      DEFAULT_PAYLOAD_LIMITS.compressAboveBytes,
    ),
    offloadAboveBytes: bytes(
      env,
      'DURABLE_AGENT_OFFLOAD_ABOVE_BYTES',
      DEFAULT_PAYLOAD_LIMITS.offloadAboveBytes,
    ),
    maxPayloadBytes: bytes(env, 'DURABLE_AGENT_MAX_PAYLOAD_BYTES', DEFAULT_PAYLOAD_LIMITS.maxPayloadBytes),
  };
}

function bytes(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1024)
    throw new Error(`${name} must be a whole number of bytes, at least 1024; got ${raw}`);
  return value;
}

/** Exact names of the payload codec's own settings (besides the blob store's). */
const CODEC_SETTINGS = [
  'DURABLE_AGENT_DATA_DIR',
  'DURABLE_AGENT_COMPRESS_ABOVE_BYTES',
  'DURABLE_AGENT_OFFLOAD_ABOVE_BYTES',
  'DURABLE_AGENT_MAX_PAYLOAD_BYTES',
];
/** Prefixes of what a blob store reads: its own settings, and the AWS and PostgreSQL clients' standard variables. */
const BLOB_STORE_PREFIXES = ['DURABLE_AGENT_BLOB_', 'AWS_', 'PG'];

/**
 * The names in `env` that `agentDataConverter(env)` reads: what a process that only decodes
 * payloads (the codec server) is given, and nothing else of its parent's environment.
 */
export function dataConverterVariables(env: NodeJS.ProcessEnv): string[] {
  return Object.keys(env).filter(
    (name) => CODEC_SETTINGS.includes(name) || BLOB_STORE_PREFIXES.some((prefix) => name.startsWith(prefix)),
  );
}
