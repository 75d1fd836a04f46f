import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { dataDir, ensurePrivateDirectory } from '../platform/paths';

/** How a worker talks to RAP tool servers and where they call it back. */
export interface RapSettings {
  /** Tool servers' base URLs; each serves `/.well-known/rap-toolset`. */
  toolsets: string[];
  /** Where the callback server listens. */
  host: string;
  port: number;
  /** The base URL tools are given for callbacks; `http://host:port` when absent. */
  publicUrl?: string;
  /** Signs callback URLs; every worker of a deployment needs the same one. */
  secret: Buffer;
  /** A RAP call's timeout when its tool does not answer, ms. */
  timeoutMs: number;
}

export const DEFAULT_RAP_TIMEOUT_MS = 300_000;
export const DEFAULT_RAP_CALLBACK_PORT = 7244;

/**
 * DURABLE_AGENT_RAP_TOOLSETS (comma-separated base URLs; no RAP when unset),
 * DURABLE_AGENT_RAP_CALLBACK_HOST / _PORT / _URL, DURABLE_AGENT_RAP_SECRET (else one generated
 * once into the data directory) and DURABLE_AGENT_RAP_TIMEOUT_MS.
 */
export function rapSettingsFromEnv(env: NodeJS.ProcessEnv): RapSettings | undefined {
  const toolsets = (env.DURABLE_AGENT_RAP_TOOLSETS ?? '')
    .split(',')
    .map((entry) => entry.trim().replace(/\/+$/, ''))
    .filter(Boolean);
  if (toolsets.length === 0) return undefined;
  for (const url of toolsets) {
    if (!/^https?:\/\/[^/]+/.test(url))
      throw new Error(`DURABLE_AGENT_RAP_TOOLSETS: not an http(s) URL: ${url}`);
  }
  return {
    toolsets,
    host: env.DURABLE_AGENT_RAP_CALLBACK_HOST || '127.0.0.1',
    port: integer(env, 'DURABLE_AGENT_RAP_CALLBACK_PORT', DEFAULT_RAP_CALLBACK_PORT, 0),
    ...(env.DURABLE_AGENT_RAP_CALLBACK_URL
      ? { publicUrl: env.DURABLE_AGENT_RAP_CALLBACK_URL.replace(/\/+$/, '') }
      : {}),
    secret: env.DURABLE_AGENT_RAP_SECRET ? Buffer.from(env.DURABLE_AGENT_RAP_SECRET) : storedSecret(env),
    timeoutMs: integer(env, 'DURABLE_AGENT_RAP_TIMEOUT_MS', DEFAULT_RAP_TIMEOUT_MS, 1),
  };
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`${name} must be a whole number ≥ ${min}; got ${raw}`);
  return value;
}

function storedSecret(env: NodeJS.ProcessEnv): Buffer {
  const file = path.join(dataDir(env), 'rap-secret');
  try {
    return Buffer.from(readFileSync(file, 'utf8').trim());
  } catch {
    ensurePrivateDirectory(path.dirname(file));
    const secret = randomBytes(32).toString('base64url');
    writeFileSync(file, secret, { mode: 0o600, flag: 'wx' });
    return Buffer.from(readFileSync(file, 'utf8').trim());
  }
}
