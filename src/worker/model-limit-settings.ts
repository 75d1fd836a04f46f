import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { ModelLimiterSettings } from '../activities/model-lease';
import { ModelLimitsSchema } from '../shared/model-limiter';
import { wholeNumberFromEnv } from './env-number';

/** How long a lease lasts unrenewed: how soon a dead worker's model call gives its place back. */
export const DEFAULT_MODEL_LEASE_TTL_MS = 30_000;

const LimitsFileSchema = ModelLimitsSchema.partial().strict();

/**
 * The fleet's limits on the model endpoint, from AGENT_MODEL_MAX_CONCURRENT, AGENT_MODEL_MAX_RPS and
 * AGENT_MODEL_LEASE_TTL_MS, over AGENT_MODEL_LIMITS_FILE (a JSON file with `maxConcurrent`, `maxRps`,
 * `leaseTtlMs`). Undefined when neither limit is set: model calls then ask no one. Throws on a
 * malformed value.
 */
export function modelLimiterFromEnv(env: NodeJS.ProcessEnv): ModelLimiterSettings | undefined {
  const file = env.AGENT_MODEL_LIMITS_FILE ? limitsFile(env.AGENT_MODEL_LIMITS_FILE) : {};
  const maxConcurrent = env.AGENT_MODEL_MAX_CONCURRENT?.trim()
    ? wholeNumberFromEnv(env, 'AGENT_MODEL_MAX_CONCURRENT', 0, 1)
    : file.maxConcurrent;
  const maxRps = env.AGENT_MODEL_MAX_RPS?.trim() ? positiveFromEnv(env, 'AGENT_MODEL_MAX_RPS') : file.maxRps;
  if (maxConcurrent === undefined && maxRps === undefined) return undefined;
  return {
    endpointKey: modelEndpointKey(env.OPENAI_BASE_URL),
    limits: {
      ...(maxConcurrent !== undefined ? { maxConcurrent } : {}),
      ...(maxRps !== undefined ? { maxRps } : {}),
      leaseTtlMs: wholeNumberFromEnv(
        env,
        'AGENT_MODEL_LEASE_TTL_MS',
        file.leaseTtlMs ?? DEFAULT_MODEL_LEASE_TTL_MS,
        100,
      ),
    },
  };
}

/** The endpoint's host and path (`127.0.0.1:11434/v1`); OpenAI's when no base URL is set. */
export function modelEndpointKey(baseURL: string | undefined): string {
  if (!baseURL) return 'api.openai.com/v1';
  const url = new URL(baseURL);
  return `${url.host}${url.pathname.replace(/\/+$/, '')}`;
}

function positiveFromEnv(env: NodeJS.ProcessEnv, name: string): number {
  const text = env[name]!.trim();
  const value = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || !(value > 0)) {
    throw new Error(`${name} must be a number > 0, not ${JSON.stringify(text)}`);
  }
  return value;
}

function limitsFile(file: string): z.infer<typeof LimitsFileSchema> {
  const parsed = LimitsFileSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
  if (!parsed.success) throw new Error(`AGENT_MODEL_LIMITS_FILE ${file}: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
