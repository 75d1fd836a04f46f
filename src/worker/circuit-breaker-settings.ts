import { wholeNumberFromEnv } from './env-number';
import { type CircuitBreakerSettings, DEFAULT_CIRCUIT_BREAKER_SETTINGS } from '../tools/circuit-breaker';

/**
 * The worker's tool circuit breakers from its environment:
 * - AGENT_TOOL_BREAKER_FAILURES: failures of a tool in a row that disable it on this worker
 *   (default 5; 0 turns breakers off);
 * - AGENT_TOOL_BREAKER_COOLDOWN_MS: how long it stays disabled before one trial call (default 60000).
 */
export function circuitBreakerSettingsFromEnv(env: NodeJS.ProcessEnv): CircuitBreakerSettings {
  return {
    failureThreshold: wholeNumberFromEnv(
      env,
      'AGENT_TOOL_BREAKER_FAILURES',
      DEFAULT_CIRCUIT_BREAKER_SETTINGS.failureThreshold,
    ),
    coolDownMs: wholeNumberFromEnv(
      env,
      'AGENT_TOOL_BREAKER_COOLDOWN_MS',
      DEFAULT_CIRCUIT_BREAKER_SETTINGS.coolDownMs,
    ),
  };
}
