import { condition } from '@temporalio/workflow';
import {
  type ApprovalDecision,
  type ApprovalDecisionKind,
  type ApprovalMode,
  type ApprovalSettings,
  PENDING_ARGUMENTS_CHARS,
  type PendingApproval,
  type StandingDecision,
  isAllow,
} from '../shared/approvals';
import { BUDGET_PAUSE_TOOL, type BudgetPause, budgetKindWords, budgetPauseArguments } from '../shared/budget';
import { EVENT_ARGUMENTS_CHARS } from '../shared/constants';
import { sha256Hex } from '../shared/sha256';
import type { ToolBlocker } from '../shared/tool-outcome';
import { signedDecisionText } from '../shared/signed-decisions';
import { type ApprovalPolicy, POLICY_DECIDER, policyFor } from '../shared/approval-policy';
import { approvalFloorFor, stricterApproval } from '../shared/worker-floors';
import type { ApprovalReceipt } from '../shared/conversation-api';
import type { DecisionSignatures } from './decision-signatures';
import type { EventLog } from './event-log';
import { checkPolicyDecision, countPolicyDecision, countedAs, pendingPolicy } from './policy-request';
import { policyProgress, policySummary } from '../shared/pending-policy';
import { workflowTime } from './workflow-time';

/** Who a daily-budget pause is recorded as decided by when the next UTC day lets the run go on. */
export const NEXT_DAY_DECIDER = 'next-day';

/** A request that ends by itself after `afterMs` with `decision`, unless a person decides first. */
interface Lapse {
  afterMs: number;
  decision: ApprovalDecision;
}

/** Decided tool call ids remembered to tell "already decided" from "unknown" (bounded, like everything in state). */
const REMEMBERED_DECISIONS = 1_000;

/** A call that may need a decision, with its whole arguments text. */
export type ApprovalRequest = Omit<
  PendingApproval,
  'requestedAt' | 'expiresAt' | 'argumentsTruncated' | 'argumentsLength' | 'argumentsSha256'
>;

/** What a person deciding is shown: the whole arguments (cut only past a bound no model reaches), their length and hash. */
function pendingOf(call: ApprovalRequest): Omit<PendingApproval, 'requestedAt' | 'expiresAt'> {
  const text = call.arguments;
  return {
    ...call,
    arguments: text.slice(0, PENDING_ARGUMENTS_CHARS),
    ...(text.length > PENDING_ARGUMENTS_CHARS ? { argumentsTruncated: true } : {}),
    argumentsLength: text.length,
    argumentsSha256: sha256Hex(text),
  };
}

/** Whether a call may run; when not, who refused it (a person, or nobody in time) and why, as the model reads it. */
export type ApprovalOutcome =
  | { allowed: true }
  | { allowed: false; blockedBy: Extract<ToolBlocker, 'approval' | 'approval_timeout'>; reason: string };

/** State a continued conversation carries over: decisions that hold for the rest of it. */
export type StandingDecisions = Record<string, StandingDecision>;

/** What the worker holds this conversation to, once it has admitted it. */
export interface ApprovalEnforcement {
  /** The least mode each tool gets (`*`: every tool). */
  approvalFloor: Record<string, ApprovalMode>;
  /** The operator's quorums, escalations and expiries, by tool and risk. */
  approvalPolicy?: ApprovalPolicy;
}

/**
 * Pending approvals and the decisions made on them. Decisions arrive by signal or update; the
 * tool call that asked waits in `decide()` until one arrives, a standing decision covers it, or
 * the conversation's timeout passes. A decision that `check()` refuses changes nothing.
 */
export class ApprovalBook {
  private readonly pending = new Map<string, PendingApproval>();
  private readonly decisions = new Map<string, ApprovalDecision>();
  /** Why a request is no longer pending, by tool call id: for a clear refusal of late decisions. */
  private readonly closed = new Map<string, 'was already decided' | 'was withdrawn by a steer or abort'>();
  private readonly standing: Map<string, StandingDecision>;
  private enforcement: ApprovalEnforcement = { approvalFloor: {} };

  constructor(
    private readonly conversationId: string,
    private readonly settings: ApprovalSettings,
    private readonly events: EventLog,
    /** Where the worker names approver keys, every decision is checked and spent here. */
    private readonly signatures: DecisionSignatures,
    standing: StandingDecisions = {},
  ) {
    this.standing = new Map(Object.entries(standing));
  }

  /** The conversation's mode from now on; `undefined` leaves each tool to its own setting. */
  setMode(mode: ApprovalSettings['mode']): void {
    if (mode === undefined) delete this.settings.mode;
    else this.settings.mode = mode;
  }

  get mode(): ApprovalSettings['mode'] {
    return this.settings.mode;
  }

  /** The worker's floors, from its admission of this conversation. */
  enforce(enforcement: ApprovalEnforcement): void {
    this.enforcement = enforcement;
  }

  /** Who may decide in this conversation; anyone when absent. */
  get approvers(): readonly string[] | undefined {
    return this.settings.approvers;
  }

  /** Throws with the reason a decision cannot be taken; touches nothing. */
  check(decision: ApprovalDecision): PendingApproval {
    return this.checked(decision).pending;
  }

  private checked(decision: ApprovalDecision) {
    const pending = this.pending.get(decision.toolCallId);
    if (!pending || this.decisions.has(decision.toolCallId)) {
      const closed = this.closed.get(decision.toolCallId);
      throw new Error(
        closed
          ? `tool call ${decision.toolCallId} ${closed}`
          : `no approval is pending for tool call ${decision.toolCallId}`,
      );
    }
    const approvers = this.settings.approvers;
    // A delegate decides in the delegator's place, so it is the delegator who must be one of them.
    const approver = countedAs(decision);
    if (approvers && !approvers.includes(approver)) {
      throw new Error(`${approver} may not approve tool calls in this conversation`);
    }
    if (decision.argumentsSha256 !== undefined && decision.argumentsSha256 !== pending.argumentsSha256) {
      throw new Error(
        `the decision is for other arguments (SHA-256 ${decision.argumentsSha256}) than tool call ${decision.toolCallId} has (${pending.argumentsSha256})`,
      );
    }
    checkBudgetRaise(decision, pending);
    if (decision.delegation) {
      if (!pending.policy) throw new Error('a delegation counts only under an approval policy');
      this.signatures.checkDelegation(decision.delegation, decision.by);
    }
    if (pending.policy) checkPolicyDecision(pending.policy, decision);
    const signature = this.signatures.check(decision, (expiresAt) =>
      signedDecisionText({
        conversationId: this.conversationId,
        toolCallId: decision.toolCallId,
        // Signed over the pending call's own hash, so a signature for other arguments fails whether or not the decision names one.
        argumentsSha256: pending.argumentsSha256,
        decision: decision.decision,
        by: decision.by,
        expiresAt,
        ...(decision.raise ? { raise: decision.raise } : {}),
      }),
    );
    return { pending, signature };
  }

  /** Records a decision `check()` accepted. */
  apply(decision: ApprovalDecision): ApprovalReceipt {
    const { pending, signature } = this.checked(decision);
    this.signatures.spend(signature);
    if (pending.policy) return this.applyUnderPolicy(pending, pending.policy, decision);
    this.decisions.set(decision.toolCallId, decision);
    // A budget pause is decided each time: an "always" holds for that pause alone.
    if (pending.budget)
      return { toolCallId: pending.toolCallId, toolName: pending.toolName, decision: decision.decision };
    if (decision.decision === 'allow_always')
      this.standing.set(pending.scope, { decision: 'allow', by: decision.by });
    if (decision.decision === 'reject_always')
      this.standing.set(pending.scope, { decision: 'reject', by: decision.by });
    return { toolCallId: pending.toolCallId, toolName: pending.toolName, decision: decision.decision };
  }

  /**
   * A decision counts towards the policy's quorum; the request is decided once a group's quorum has
   * allowed, or one of its approvers rejected (where that stops it). Each count is recorded.
   */
  private applyUnderPolicy(
    pending: PendingApproval,
    policy: NonNullable<PendingApproval['policy']>,
    decision: ApprovalDecision,
  ): ApprovalReceipt {
    const decided = countPolicyDecision(policy, decision);
    const receipt = { toolCallId: pending.toolCallId, toolName: pending.toolName };
    this.events.record(pending.run, {
      type: 'approval_counted',
      toolCallId: pending.toolCallId,
      toolName: pending.toolName,
      decision: decision.decision,
      by: decision.delegation ? `${decision.by} for ${decision.delegation.from}` : decision.by,
      progress: policyProgress(policy),
    });
    if (!decided) return { ...receipt, decision: decision.decision, waitingFor: policyProgress(policy) };
    this.decisions.set(decision.toolCallId, decided);
    if (decided.decision === 'allow_always')
      this.standing.set(pending.scope, { decision: 'allow', by: decided.by, quorum: true });
    if (decided.decision === 'reject_always')
      this.standing.set(pending.scope, { decision: 'reject', by: decided.by });
    return { ...receipt, decision: decided.decision };
  }

  /**
   * Whether a call may run. Asks (and waits) when its mode requires it; throws CancelledFailure when
   * the run is steered or aborted meanwhile.
   */
  async decide(call: ApprovalRequest, asked: ApprovalMode): Promise<ApprovalOutcome> {
    const floor = this.enforcement.approvalFloor;
    const policy = policyFor(this.enforcement.approvalPolicy, call, workflowTime());
    const mode = stricterApproval(
      stricterApproval(
        stricterApproval(asked, approvalFloorFor(floor, call.toolName)),
        approvalFloorFor(floor, call.scope.split('@')[0]!),
      ),
      policy ? 'ask' : undefined,
    );
    if (mode === 'auto') return { allowed: true };
    const request = { ...pendingOf({ ...call, mode }), ...(policy ? { policy: pendingPolicy(policy) } : {}) };
    // Under a policy only its quorum's "always" stands for later calls.
    const standingOf = (scope: string) => {
      const entry = this.standing.get(scope);
      return policy && entry?.decision === 'allow' && !entry.quorum ? undefined : entry;
    };
    const standing = standingOf(request.scope);
    if (standing?.decision === 'reject') {
      return {
        allowed: false,
        blockedBy: 'approval',
        reason: `${request.scope === request.toolName ? request.toolName : `${request.toolName} (${request.scope})`} was rejected for this conversation by ${standing.by}`,
      };
    }
    if (standing?.decision === 'allow' && mode === 'ask') return { allowed: true };
    const coveredByStanding = () => {
      const entry = standingOf(request.scope);
      return entry?.decision === 'reject' || (entry?.decision === 'allow' && mode === 'ask');
    };
    const { decision, timedOut } = await this.waitForDecision(request, coveredByStanding);
    if (timedOut)
      return {
        allowed: false,
        blockedBy: 'approval_timeout',
        reason:
          decision.by === POLICY_DECIDER
            ? `rejected by the approval policy: ${decision.reason}`
            : `approval timed out: ${decision.reason}`,
      };
    if (isAllow(decision.decision)) return { allowed: true };
    return {
      allowed: false,
      blockedBy: 'approval',
      reason: `rejected by ${decision.by}${decision.reason ? `: ${decision.reason}` : ''}`,
    };
  }

  /**
   * Asks whether a run that reached its budget goes on, as a pending approval under `toolCallId`
   * (so every client shows and decides it like one); no standing decision covers it. Returns the
   * decision: an allow (with any `raise`), a reject, or on the conversation's approval timeout a
   * reject by `timeout`. Throws CancelledFailure when the run is steered or aborted meanwhile.
   */
  async askBudget(request: {
    toolCallId: string;
    run: number;
    pause: BudgetPause;
  }): Promise<ApprovalDecision> {
    const pending = budgetPauseRequest(request);
    return (await this.waitForDecision(pending, () => false)).decision;
  }

  /**
   * Asks as `askBudget`, for a run whose agent spent its day: only a reject answers it (an allow
   * cannot raise the operator's cap; `check` refuses it), and the approval timeout does not apply.
   * After `waitMs` (when the next UTC day begins) the request lapses, recorded as decided by
   * `next-day`, and undefined is returned: the run goes on.
   */
  async askDailyBudget(request: {
    toolCallId: string;
    run: number;
    pause: BudgetPause;
    waitMs: number;
  }): Promise<ApprovalDecision | undefined> {
    const pending = budgetPauseRequest(request);
    const lapse: ApprovalDecision = {
      toolCallId: request.toolCallId,
      decision: 'allow_once',
      by: NEXT_DAY_DECIDER,
      reason: 'the next UTC day began',
    };
    const { decision } = await this.waitForDecision(pending, () => false, {
      afterMs: request.waitMs,
      decision: lapse,
    });
    return decision === lapse ? undefined : decision;
  }

  /** Whether an id is taken by a request waiting now. */
  isPending(toolCallId: string): boolean {
    return this.pending.has(toolCallId);
  }

  private async waitForDecision(
    request: Omit<PendingApproval, 'requestedAt' | 'expiresAt'>,
    coveredByStanding: () => boolean,
    lapse?: Lapse,
  ): Promise<{ decision: ApprovalDecision; timedOut: boolean }> {
    const requestedAt = workflowTime();
    const expiresAt = lapse ? undefined : this.expiryOf(request, requestedAt);
    this.pending.set(request.toolCallId, {
      ...request,
      requestedAt,
      ...(expiresAt !== undefined ? { expiresAt } : {}),
    });
    this.events.record(request.run, {
      type: 'approval_requested',
      toolCallId: request.toolCallId,
      toolName: request.toolName,
      args: request.arguments.slice(0, EVENT_ARGUMENTS_CHARS),
      argsSha256: request.argumentsSha256,
      risk: request.risk,
      ...(request.policy ? { asks: policySummary(request.policy) } : {}),
    });
    let outcome: { decision: ApprovalDecision; timedOut: boolean } | undefined;
    try {
      outcome = lapse
        ? await this.awaitDecisionOrLapse(request, lapse)
        : await this.awaitDecision(request, coveredByStanding);
      return outcome;
    } finally {
      this.pending.delete(request.toolCallId);
      this.decisions.delete(request.toolCallId);
      this.closed.set(
        request.toolCallId,
        outcome ? 'was already decided' : 'was withdrawn by a steer or abort',
      );
      if (this.closed.size > REMEMBERED_DECISIONS) this.closed.delete(this.closed.keys().next().value!);
    }
  }

  /** When a request is rejected for want of a decision: the conversation's timeout or the policy's expiry, the sooner. */
  private expiryOf(request: Pick<PendingApproval, 'policy'>, requestedAt: number): number | undefined {
    const { timeoutMs } = this.settings;
    const times = [
      timeoutMs !== undefined ? requestedAt + timeoutMs : undefined,
      request.policy?.expiry?.at,
    ].filter((time): time is number => time !== undefined);
    return times.length > 0 ? Math.min(...times) : undefined;
  }

  /**
   * Waits for the decision, on durable timers: at the policy's escalation deadline the request is
   * offered to the escalation group too (recorded once); at its expiry (or the conversation's
   * timeout) it is rejected, by `policy` (or `timeout`).
   */
  private async awaitDecision(
    request: Omit<PendingApproval, 'requestedAt' | 'expiresAt'>,
    coveredByStanding: () => boolean,
  ): Promise<{ decision: ApprovalDecision; timedOut: boolean }> {
    const answered = () => this.decisions.has(request.toolCallId) || coveredByStanding();
    const { expiresAt } = this.pending.get(request.toolCallId)!;
    const policy = request.policy;
    for (;;) {
      const escalateAt = policy?.escalation && !policy.escalated ? policy.escalation.at : undefined;
      const next = Math.min(escalateAt ?? Infinity, expiresAt ?? Infinity);
      const inTime =
        next === Infinity
          ? (await condition(answered), true)
          : await condition(answered, Math.max(1, next - workflowTime()));
      if (inTime) break;
      if (escalateAt !== undefined && workflowTime() >= escalateAt) {
        this.escalate(request, policy!);
        continue;
      }
      const byPolicy = policy?.expiry !== undefined && expiresAt === policy.expiry.at;
      const timedOut: ApprovalDecision = {
        toolCallId: request.toolCallId,
        decision: 'reject_once',
        by: byPolicy ? POLICY_DECIDER : 'timeout',
        reason: byPolicy ? policy!.expiry!.reason : `no decision within ${this.settings.timeoutMs! / 1000}s`,
      };
      this.record(request, timedOut);
      return { decision: timedOut, timedOut: true };
    }
    const decision = this.decisions.get(request.toolCallId) ?? this.standingDecision(request);
    this.record(request, decision);
    return { decision, timedOut: false };
  }

  private escalate(
    request: { run: number; toolCallId: string; toolName: string },
    policy: NonNullable<PendingApproval['policy']>,
  ): void {
    policy.escalated = true;
    const { name, members, quorum } = policy.escalation!;
    this.events.record(request.run, {
      type: 'approval_escalated',
      toolCallId: request.toolCallId,
      toolName: request.toolName,
      to: name,
      members,
      quorum,
    });
  }

  private async awaitDecisionOrLapse(
    request: Omit<PendingApproval, 'requestedAt' | 'expiresAt'>,
    lapse: Lapse,
  ): Promise<{ decision: ApprovalDecision; timedOut: boolean }> {
    await condition(() => this.decisions.has(request.toolCallId), Math.max(1, lapse.afterMs));
    const decision = this.decisions.get(request.toolCallId) ?? lapse.decision;
    this.record(request, decision);
    return { decision, timedOut: false };
  }

  pendingApprovals(): PendingApproval[] {
    return [...this.pending.values()];
  }

  standingDecisions(): StandingDecisions {
    return Object.fromEntries(this.standing);
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  private standingDecision(request: { toolCallId: string; scope: string }): ApprovalDecision {
    const entry = this.standing.get(request.scope)!;
    const kind: ApprovalDecisionKind = entry.decision === 'allow' ? 'allow_always' : 'reject_always';
    return { toolCallId: request.toolCallId, decision: kind, by: entry.by, reason: 'decided always earlier' };
  }

  private record(request: { run: number; toolName: string }, decision: ApprovalDecision): void {
    this.events.record(request.run, {
      type: 'approval_decided',
      toolCallId: decision.toolCallId,
      toolName: request.toolName,
      decision: decision.decision,
      by: decision.by,
      ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
    });
  }
}

/** A raise belongs to an allow of a budget pause, and names the part of the budget that ran out, nothing else. */
function checkBudgetRaise(decision: ApprovalDecision, pending: PendingApproval): void {
  const { raise } = decision;
  if (pending.budget?.kind === 'dailyTokens' && (raise || isAllow(decision.decision))) {
    const { agentId, resumesAt } = pending.budget;
    throw new Error(
      `the run waits for agent ${agentId}'s daily token budget, which only the worker's operator sets (AGENT_BUDGET_TOKENS_PER_DAY): it goes on by itself when the next UTC day begins${resumesAt !== undefined ? ` (${new Date(resumesAt).toISOString()})` : ''}; a reject stops it now`,
    );
  }
  if (!raise) return;
  if (!pending.budget)
    throw new Error(`tool call ${pending.toolCallId} is no budget pause: a raise does not apply to it`);
  if (!isAllow(decision.decision)) throw new Error('a rejection stops the run: it cannot raise the budget');
  const { kind } = pending.budget;
  if (kind === 'dailyTokens') return;
  const named = Object.keys(raise).filter((key) => raise[key as keyof typeof raise] !== undefined);
  if (raise[kind] === undefined || named.length !== 1)
    throw new Error(
      `the run is paused at its ${budgetKindWords(kind)}: the raise must name ${kind}, and only it`,
    );
}

/** A budget pause as a pending approval: asked of a person whatever the standing decisions say. */
function budgetPauseRequest(request: { toolCallId: string; run: number; pause: BudgetPause }) {
  return pendingOf({
    toolCallId: request.toolCallId,
    toolName: BUDGET_PAUSE_TOOL,
    arguments: budgetPauseArguments(request.pause),
    scope: BUDGET_PAUSE_TOOL,
    risk: 'medium',
    mode: 'always',
    run: request.run,
    budget: request.pause,
  });
}
