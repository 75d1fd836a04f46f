import { DEFAULT_MODEL_STREAM_TIMEOUTS, type ModelStreamTimeouts } from '../shared/model-stream-timeouts';
import { wholeNumberFromEnv } from './env-number';

/**
 * When the worker gives up on a quiet model endpoint and tries again:
 * - AGENT_MODEL_FIRST_TOKEN_TIMEOUT_MS: no first token this long after the request (default 180000);
 * - AGENT_MODEL_IDLE_TIMEOUT_MS: nothing more this long once it is streaming (default 60000).
 */
export function modelStreamTimeoutsFromEnv(env: NodeJS.ProcessEnv): ModelStreamTimeouts {
  return {
    firstTokenMs: wholeNumberFromEnv(
      env,
      'AGENT_MODEL_FIRST_TOKEN_TIMEOUT_MS',
      DEFAULT_MODEL_STREAM_TIMEOUTS.firstTokenMs,
      1_000,
    ),
    idleMs: wholeNumberFromEnv(
      env,
      'AGENT_MODEL_IDLE_TIMEOUT_MS',
      DEFAULT_MODEL_STREAM_TIMEOUTS.idleMs,
      1_000,
    ),
  };
}
