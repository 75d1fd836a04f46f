import { TOOL_FAULT_KINDS } from '../shared/tool-errors';
import { type ToolOutcome, circuitOpenOutcome } from '../shared/tool-outcome';
import type { CircuitState, ToolCircuitBreakers } from './circuit-breaker';
import { sanitizeText } from './text-sanitizer';
import { truncateText } from './truncate';

/** What a call that ran says about its tool. */
export type CircuitVerdict =
  /** A result, or an error the call itself caused (bad arguments, a missing file). */
  | { kind: 'works' }
  /** The tool failed (its server down, its disk gone): `why` in a few words. */
  | { kind: 'fails'; why: string }
  /** Cancelled or handed over: nothing learnt about the tool. */
  | { kind: 'silent' };

/** What running a call gave: its outcome, and for an error the message its text holds. */
export interface RanCall {
  outcome: ToolOutcome;
  message?: string;
}

/** An open circuit's notice quotes the last failure this long at most. */
const LAST_FAILURE_BYTES = 300;

/**
 * Tool calls under their tools' circuit breakers (see circuit-breaker.ts): a call is admitted or
 * refused with the notice the model reads, and what an admitted call came to is reported to its
 * breaker. The guard knows outcomes; what a throw means is for its caller to say.
 */
export class CircuitGuard {
  constructor(private readonly breakers: ToolCircuitBreakers) {}

  /** Whether a call of `tool` may run now; when not, the outcome the model reads instead. */
  admit(tool: string): { run: true } | { run: false; outcome: ToolOutcome } {
    const admission = this.breakers.admit(tool);
    if (admission.run) return { run: true };
    return {
      run: false,
      outcome: circuitOpenOutcome(tool, {
        retryAt: new Date(admission.retryAtMs).toISOString(),
        nowMs: Date.now(),
        failures: admission.failures,
        // A thrown error's message comes as it was: the notice, like every error text, is clean.
        lastFailure: sanitizeText(admission.lastFailure),
      }),
    };
  }

  /** An admitted call that never ran (a hook refused it): it says nothing about the tool. */
  notRun(tool: string): void {
    this.breakers.released(tool);
  }

  /**
   * Runs an admitted call and tells the breaker how it went: an error of a kind that is the tool's
   * fault (TOOL_FAULT_KINDS) counts as a failure, an interrupted call says nothing, anything else
   * says the tool works; a throw counts as `thrown` says. `changed` hears the circuit's new state
   * when the call changed it, and whether this call's failure opened it (a trial that said
   * nothing leaves it open again, which is no new opening).
   */
  async observe(
    tool: string,
    run: () => Promise<RanCall>,
    watch: {
      thrown: (error: unknown) => CircuitVerdict;
      changed: (state: CircuitState, opened: boolean) => void;
    },
  ): Promise<ToolOutcome> {
    const before = this.breakers.state(tool);
    let verdict: CircuitVerdict | undefined;
    try {
      const ran = await run();
      verdict = verdictOf(ran);
      return ran.outcome;
    } catch (error) {
      verdict = watch.thrown(error);
      throw error;
    } finally {
      if (verdict) this.report(tool, verdict);
      const after = this.breakers.state(tool);
      if (after !== before) watch.changed(after, after === 'open' && verdict?.kind === 'fails');
    }
  }

  private report(tool: string, verdict: CircuitVerdict): void {
    if (verdict.kind === 'fails') this.breakers.failed(tool, truncateText(verdict.why, LAST_FAILURE_BYTES));
    else if (verdict.kind === 'silent') this.breakers.released(tool);
    else this.breakers.succeeded(tool);
  }
}

function verdictOf({ outcome, message }: RanCall): CircuitVerdict {
  if (
    outcome.status === 'error' &&
    outcome.errorKind !== undefined &&
    TOOL_FAULT_KINDS.has(outcome.errorKind)
  )
    return { kind: 'fails', why: message ?? outcome.errorKind };
  if (outcome.status === 'aborted') return { kind: 'silent' };
  return { kind: 'works' };
}
