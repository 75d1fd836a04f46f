import { DEFAULT_MAX_TOOL_ITERATIONS } from '../shared/constants';

/**
 * Numbers a conversation's runs as the workflow does, from what its history shows: a run starts
 * with the first model call after the conversation was idle and takes the messages waiting then; it
 * ends when a model call answers without tool calls (and no steering is waiting), when a model call
 * fails for good, on abort, once `maxToolIterations` model calls have asked for tools, or when a
 * person stops it at its budget (it makes no model call after that).
 */
export class RunNumbering {
  private count = 0;
  private open = false;
  private iteration = 0;
  /** A steering message arrived since the latest model call was scheduled: the run goes on. */
  private steered = false;
  /** The latest model call asked for tools at the iteration limit: the run ends once they return. */
  private endsAfterTools = false;
  private maxToolIterations = DEFAULT_MAX_TOOL_ITERATIONS;
  /** Messages received (or carried over) that no run has taken yet. */
  private readonly waiting = new Set<string>();

  /** The run in progress, if any. */
  get current(): number | undefined {
    return this.open ? this.count : undefined;
  }

  /**
   * A new execution starts with the count and queue a continue-as-new carried: between runs, or
   * within a run it paused between two turns (`pausedRun`), which goes on at that model call.
   */
  executionStarted(start: {
    runCount?: number;
    maxToolIterations?: number;
    queuedMessageIds: string[];
    pausedRun?: { run: number; iteration: number };
  }): void {
    this.open = start.pausedRun !== undefined;
    if (start.runCount !== undefined) this.count = start.runCount;
    if (start.pausedRun) {
      this.count = start.pausedRun.run;
      this.iteration = start.pausedRun.iteration - 1;
      this.steered = false;
      this.endsAfterTools = false;
    }
    this.maxToolIterations = start.maxToolIterations ?? DEFAULT_MAX_TOOL_ITERATIONS;
    for (const messageId of start.queuedMessageIds) this.waiting.add(messageId);
  }

  messageReceived(messageId: string): void {
    this.waiting.add(messageId);
  }

  steeringReceived(messageId: string): void {
    this.waiting.add(messageId);
    if (!this.open) return;
    this.steered = true;
    this.endsAfterTools = false;
  }

  /** An abort the workflow took (a signal, or an update that succeeded). */
  aborted(): void {
    this.open = false;
  }

  /**
   * A model call with the user messages of its input: the run it belongs to and its iteration, and
   * the messages it took when it starts a run. (After compaction the input is the whole transcript
   * again, so only messages still waiting count.)
   */
  modelCallScheduled(userMessageIds: string[]): { run: number; iteration: number; took?: string[] } {
    let took: string[] | undefined;
    if (!this.open || this.endsAfterTools) {
      this.count++;
      this.open = true;
      this.iteration = 0;
      this.endsAfterTools = false;
      took = userMessageIds.filter((messageId) => this.waiting.delete(messageId));
    }
    this.iteration++;
    this.steered = false;
    return { run: this.count, iteration: this.iteration, ...(took ? { took } : {}) };
  }

  /** A rejected budget pause ends the run: it makes no further model call. */
  budgetStopped(): void {
    this.open = false;
  }

  /**
   * The run a budget decision belongs to: the one in progress, or, when none is, the run about to
   * start (a run may pause at its budget before its first model call, which is what starts it here).
   */
  get runOfBudgetPause(): number {
    return this.open ? this.count : this.count + 1;
  }

  /** A model call the agent's spent day held back: the run asks again at the same iteration. */
  modelCallHeldBack(): void {
    this.iteration--;
  }

  /** A model call that failed for good, or was cancelled by an abort, ends its run. */
  modelCallFailed(): void {
    this.open = false;
  }

  modelCallAnswered(toolCalls: number): void {
    if (this.steered) return;
    if (toolCalls === 0) this.open = false;
    else if (this.iteration >= this.maxToolIterations) this.endsAfterTools = true;
  }

  executionClosed(): void {
    this.open = false;
  }
}
