import { condition, workflowInfo } from '@temporalio/workflow';
import { isAllow } from '../shared/approvals';
import {
  BUDGET_PAUSE_PREFIX,
  type Budget,
  type BudgetCheckpoint,
  type BudgetKind,
  type BudgetLimits,
  type BudgetPause,
  type BudgetStatus,
  type BudgetUsage,
  defaultRaise,
  exhaustedBudget,
  limitsOf,
  raisedLimits,
  type Spent,
  addSpent,
  spentOf,
} from '../shared/budget';
import type { DailyBudgetSpent } from '../shared/daily-budget';
import type { Usage } from '../shared/messages';
import type { ApprovalBook } from './approval-book';
import type { EventLog } from './event-log';
import { NOTHING_RESERVED, type Reserved, subAgentShare, withShare } from './sub-agent-share';
import { workflowTime } from './workflow-time';

/** What continue-as-new hands over: spending, the limits as raised, and where the deadline counts from. */
export interface CarriedBudget {
  startedAt: number;
  used: BudgetUsage;
  run: BudgetUsage & { run: number };
  limits: BudgetLimits;
  /** Pauses asked so far, so pause ids stay unique in the conversation. */
  pauses: number;
}

/** Whether a run may go on past a checkpoint: yes, or no because its budget was not raised. */
export type BudgetVerdict = 'go' | 'stop';

/**
 * A conversation's spending and its budget. Counting is state only, for every conversation; only a
 * conversation with a budget ever pauses, so one without behaves (and schedules) as before. A pause
 * is a pending approval in the ApprovalBook: an allow raises the budget and the run goes on, a
 * reject stops the run (recorded as `budget_exhausted`; the run then ends at its next step).
 */
export class ConversationBudget {
  private readonly startedAt: number;
  private readonly used: BudgetUsage;
  private runUsage: BudgetUsage & { run: number };
  private limits: BudgetLimits;
  private pauses: number;
  /** A pause being decided: other checkpoints of the run wait for its decision instead of asking again. */
  private pausing = false;
  /** The run a rejection stopped. */
  private stopped: number | undefined;
  /** What the sub-agents running now hold of the budget, and how many they are. */
  private reserved: Reserved = NOTHING_RESERVED;
  private subAgentsRunning = 0;
  /** The sub-agents the turn asked for that have not taken their share yet. */
  private subAgentsToShare = 0;

  /**
   * @param stopsAtLimit The conversation is a sub-agent, whose budget is its share of its parent's:
   *   at its limit the run stops rather than asking a person, and the parent, which counts what it
   *   spent, pauses at its own.
   */
  constructor(
    private readonly budget: Budget | undefined,
    private readonly approvals: ApprovalBook,
    private readonly events: EventLog,
    carried: CarriedBudget | undefined,
    private readonly stopsAtLimit = false,
  ) {
    // The conversation's start as its history records it (deterministic); carried from execution to execution.
    this.startedAt = carried?.startedAt ?? workflowInfo().startTime.getTime();
    this.used = { ...(carried?.used ?? { tokens: 0, toolCalls: 0 }) };
    this.runUsage = { ...(carried?.run ?? { run: 0, tokens: 0, toolCalls: 0 }) };
    this.limits = carried?.limits ?? limitsOf(budget, this.startedAt);
    this.pauses = carried?.pauses ?? 0;
  }

  /** The agent's daily budget, as the worker that admitted the execution set it. */
  private daily: { agentId: string; tokensPerDay: number } | undefined;

  /** The admitting worker holds the conversation's agent to `tokensPerDay` across the fleet. */
  holdToDailyBudget(agentId: string, tokensPerDay: number): void {
    this.daily = { agentId, tokensPerDay };
  }

  /**
   * The agent whose tokens this conversation reports to a fleet-wide daily ledger, and whose spent
   * day holds its model calls back; undefined when the admitting worker has no daily budget for it.
   */
  get dailyBudgetAgent(): string | undefined {
    return this.daily?.agentId;
  }

  /** What a compaction needs to count its summary's tokens here and in the agent's day. */
  compactionCounting(): { dailyBudgetAgent?: string; spent: (spent: Spent) => void } {
    return {
      ...(this.dailyBudgetAgent !== undefined ? { dailyBudgetAgent: this.dailyBudgetAgent } : {}),
      spent: (spent) => this.spentElsewhere(spent),
    };
  }

  /** A run begins; a run resumed after continue-as-new goes on counting where it was. */
  runStarted(run: number): void {
    if (this.runUsage.run !== run) this.runUsage = { run, tokens: 0, toolCalls: 0 };
  }

  /** Counts what the endpoint reported for a model call (nothing when it reported no usage). */
  modelReplied(usage: Usage | undefined): void {
    if (usage) this.spentElsewhere(spentOf(usage));
  }

  /**
   * Counts what was spent outside the conversation's own model calls: its compactions' summaries,
   * and the conversations of the sub-agents it started.
   */
  spentElsewhere(spent: Spent): void {
    if (!(spent.tokens >= 0)) return;
    addSpent(this.used, spent);
    addSpent(this.runUsage, spent);
  }

  /** The turn's model asked for `count` sub-agents, which split what is left as they start. */
  subAgentsAsked(count: number): void {
    this.subAgentsToShare = count;
  }

  /**
   * The budget of a sub-agent about to start, held until it ends (see subAgentShare); undefined for
   * a conversation without a budget, and the unit that has nothing left when one has not.
   */
  shareForSubAgent(): Budget | BudgetKind | undefined {
    if (!this.budget) return undefined;
    const ways = Math.max(1, this.subAgentsToShare);
    this.subAgentsToShare = ways - 1;
    const share = subAgentShare(this.limits, this.used, this.reserved, workflowTime(), ways);
    if (typeof share === 'string') return share;
    this.reserved = withShare(this.reserved, share, 1);
    this.subAgentsRunning++;
    return share;
  }

  /**
   * The sub-agent given `share` ended: its share is given back and what its conversation spent is
   * counted here, tool calls included. One that ended without saying (cancelled, timed out, failed)
   * may have spent all of its share, so all of it is counted.
   */
  subAgentEnded(share: Budget, usage: BudgetUsage | undefined): void {
    this.reserved = --this.subAgentsRunning === 0 ? NOTHING_RESERVED : withShare(this.reserved, share, -1);
    const spent = usage ?? {
      tokens: share.tokens ?? 0,
      toolCalls: share.toolCalls ?? 0,
      ...(share.usd !== undefined ? { usd: share.usd } : {}),
    };
    this.spentElsewhere(spent);
    if (spent.toolCalls >= 0) {
      this.used.toolCalls += spent.toolCalls;
      this.runUsage.toolCalls += spent.toolCalls;
    }
  }

  /**
   * The model call was not made: the agent's tokens for the UTC day are spent. The run waits, with
   * a pending decision only a reject answers, until the next UTC day begins ('go') or a person
   * stops it ('stop', recorded as `budget_exhausted`).
   */
  async dailyBudgetSpent(run: number, spent: DailyBudgetSpent['dailyBudgetSpent']): Promise<BudgetVerdict> {
    if (this.stopped === run) return 'stop';
    this.pausing = true;
    try {
      const waitMs = Math.max(1, spent.nextDayInMs);
      const pause: BudgetPause = {
        kind: 'dailyTokens',
        used: spent.used,
        limit: spent.limit,
        defaultRaise: 0,
        agentId: spent.agentId,
        resumesAt: workflowTime() + waitMs,
      };
      const decision = await this.approvals.askDailyBudget({
        toolCallId: this.nextPauseId(),
        run,
        pause,
        waitMs,
      });
      if (!decision) return 'go';
      this.stopped = run;
      this.events.record(run, {
        type: 'budget_exhausted',
        budget: 'dailyTokens',
        used: spent.used,
        limit: spent.limit,
        by: decision.by,
        ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
      });
      return 'stop';
    } finally {
      this.pausing = false;
    }
  }

  /**
   * Before a model call: 'go', after a pause and a raise if the budget is spent, or 'stop'. Answers
   * at once (no promise, so nothing in the workflow waits a tick longer than before budgets) unless
   * the run pauses.
   */
  beforeModelCall(run: number): BudgetVerdict | Promise<BudgetVerdict> {
    return this.admit(run, 'model_call');
  }

  /** Before a tool call runs: as `beforeModelCall`, and on 'go' the call is counted. */
  beforeToolCall(run: number): BudgetVerdict | Promise<BudgetVerdict> {
    return this.admit(run, 'tool_call');
  }

  /** Whether a rejected pause stopped this run. */
  stoppedRun(run: number): boolean {
    return this.stopped === run;
  }

  /** What the run spent, for its `run_finished`. */
  usageOf(run: number): BudgetUsage {
    if (this.runUsage.run !== run) return { tokens: 0, toolCalls: 0 };
    const { run: _run, ...usage } = this.runUsage;
    return usage;
  }

  status(): BudgetStatus {
    return {
      used: { ...this.used },
      run: { ...this.runUsage },
      limits: { ...this.limits },
      startedAt: this.startedAt,
      ...(this.daily ? { daily: { ...this.daily } } : {}),
    };
  }

  carry(): CarriedBudget {
    return {
      startedAt: this.startedAt,
      used: { ...this.used },
      run: { ...this.runUsage },
      limits: { ...this.limits },
      pauses: this.pauses,
    };
  }

  private admit(run: number, checkpoint: BudgetCheckpoint): BudgetVerdict | Promise<BudgetVerdict> {
    if (this.stopped === run) return 'stop';
    const kind = this.budget && exhaustedBudget(this.limits, this.used, workflowTime(), checkpoint);
    if (kind) return this.paused(run, checkpoint, kind);
    // Counted as the check passes, with no await between: calls of one turn check one after another.
    if (checkpoint === 'tool_call') {
      this.used.toolCalls++;
      this.runUsage.toolCalls++;
    }
    return 'go';
  }

  /** Waits for a pause (this one's, or one another call of the run asked), then checks again. */
  private async paused(run: number, checkpoint: BudgetCheckpoint, kind: BudgetKind): Promise<BudgetVerdict> {
    if (this.pausing) await condition(() => !this.pausing);
    else await this.pause(run, kind);
    return this.admit(run, checkpoint);
  }

  /** Asks a person whether the run goes on, and applies what they decide; a sub-agent stops. */
  private async pause(run: number, kind: BudgetKind): Promise<void> {
    if (this.stopsAtLimit) {
      const { used, limit } = this.pauseOf(kind);
      this.stopped = run;
      this.events.record(run, {
        type: 'budget_exhausted',
        budget: kind,
        used,
        limit,
        by: 'parent',
        reason:
          "a sub-agent's budget is its share of what its parent had left; the parent decides whether to go on",
      });
      return;
    }
    this.pausing = true;
    try {
      const pause = this.pauseOf(kind);
      const decision = await this.approvals.askBudget({ toolCallId: this.nextPauseId(), run, pause });
      if (isAllow(decision.decision)) {
        this.limits = raisedLimits(
          this.limits,
          this.used,
          workflowTime(),
          decision.raise ?? defaultRaise(kind, this.budget!),
        );
        return;
      }
      this.stopped = run;
      this.events.record(run, {
        type: 'budget_exhausted',
        budget: kind,
        used: pause.used,
        limit: pause.limit,
        by: decision.by,
        ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
      });
    } finally {
      this.pausing = false;
    }
  }

  private pauseOf(kind: BudgetKind): BudgetPause {
    const raise = this.budget![kind]!;
    switch (kind) {
      case 'tokens':
        return { kind, used: this.used.tokens, limit: this.limits.tokens!, defaultRaise: raise };
      case 'toolCalls':
        return { kind, used: this.used.toolCalls, limit: this.limits.toolCalls!, defaultRaise: raise };
      case 'deadlineMs':
        return {
          kind,
          used: workflowTime() - this.startedAt,
          limit: this.limits.deadlineAt! - this.startedAt,
          defaultRaise: raise,
        };
      case 'usd':
        return { kind, used: this.used.usd ?? 0, limit: this.limits.usd!, defaultRaise: raise };
    }
  }

  /** `budget-N`, skipping an id a tool call of the model waiting for approval already has. */
  private nextPauseId(): string {
    let id: string;
    do id = `${BUDGET_PAUSE_PREFIX}${++this.pauses}`;
    while (this.approvals.isPending(id));
    return id;
  }
}
