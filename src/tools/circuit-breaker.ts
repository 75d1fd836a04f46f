/** How a worker's tool circuit breakers behave: after how many failures in a row a tool opens, and for how long. */
export interface CircuitBreakerSettings {
  /** Consecutive failures that open a tool's circuit; 0 turns breakers off. */
  failureThreshold: number;
  /** How long an open circuit refuses calls before one trial call is let through, in ms. */
  coolDownMs: number;
}

export const DEFAULT_CIRCUIT_BREAKER_SETTINGS: Readonly<CircuitBreakerSettings> = {
  failureThreshold: 5,
  coolDownMs: 60_000,
};

export type CircuitState = 'closed' | 'open' | 'half_open';

/** Whether a call may run now: a trial is the one call let through a circuit whose cool-down ended. */
export type CircuitAdmission =
  { run: true; trial: boolean } | { run: false; retryAtMs: number; failures: number; lastFailure: string };

export interface CircuitSnapshot {
  tool: string;
  state: CircuitState;
  consecutiveFailures: number;
  /** When an open circuit lets its next trial through (epoch ms). */
  retryAtMs?: number;
  lastFailure?: string;
}

interface Circuit {
  failures: number;
  lastFailure?: string;
  openUntilMs?: number;
  trialRunning: boolean;
}

/**
 * One breaker per tool on this worker. A tool that keeps failing for reasons that are not the
 * caller's (its server down, its disk gone) is refused for a cool-down instead of being called again
 * and again; after the cool-down one trial call runs (half-open): success closes the circuit, failure
 * opens it for another cool-down. Calls arriving while the trial runs are refused like open ones.
 */
export class ToolCircuitBreakers {
  private readonly circuits = new Map<string, Circuit>();

  constructor(
    private readonly settings: CircuitBreakerSettings = DEFAULT_CIRCUIT_BREAKER_SETTINGS,
    private readonly now: () => number = Date.now,
  ) {}

  get enabled(): boolean {
    return this.settings.failureThreshold > 0;
  }

  admit(tool: string): CircuitAdmission {
    const circuit = this.circuits.get(tool);
    if (!this.enabled || !circuit || circuit.openUntilMs === undefined) return { run: true, trial: false };
    if (this.now() < circuit.openUntilMs || circuit.trialRunning) {
      return {
        run: false,
        retryAtMs: Math.max(circuit.openUntilMs, this.now()),
        failures: circuit.failures,
        lastFailure: circuit.lastFailure ?? 'unknown',
      };
    }
    circuit.trialRunning = true;
    return { run: true, trial: true };
  }

  /** The call ran and worked (or failed through its caller's fault, which says nothing about the tool). */
  succeeded(tool: string): void {
    this.circuits.delete(tool);
  }

  failed(tool: string, why: string): void {
    if (!this.enabled) return;
    const circuit = this.circuits.get(tool) ?? { failures: 0, trialRunning: false };
    this.circuits.set(tool, circuit);
    circuit.failures += 1;
    circuit.lastFailure = why;
    const wasTrial = circuit.trialRunning;
    circuit.trialRunning = false;
    if (wasTrial || circuit.failures >= this.settings.failureThreshold) {
      circuit.openUntilMs = this.now() + this.settings.coolDownMs;
    }
  }

  /** A trial call that ended without saying anything about the tool (cancelled): the next call tries again. */
  released(tool: string): void {
    const circuit = this.circuits.get(tool);
    if (circuit?.trialRunning) circuit.trialRunning = false;
  }

  state(tool: string): CircuitState {
    const circuit = this.circuits.get(tool);
    return circuit ? this.stateOf(circuit) : 'closed';
  }

  snapshot(): CircuitSnapshot[] {
    return [...this.circuits].map(([tool, circuit]) => ({
      tool,
      state: this.stateOf(circuit),
      consecutiveFailures: circuit.failures,
      ...(circuit.openUntilMs !== undefined ? { retryAtMs: circuit.openUntilMs } : {}),
      ...(circuit.lastFailure !== undefined ? { lastFailure: circuit.lastFailure } : {}),
    }));
  }

  private stateOf(circuit: Circuit): CircuitState {
    if (circuit.openUntilMs === undefined) return 'closed';
    return circuit.trialRunning ? 'half_open' : 'open';
  }
}
