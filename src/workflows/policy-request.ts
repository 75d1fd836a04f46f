import type { ApprovalDecision, ApprovalDecisionKind, PendingPolicy } from '../shared/approvals';
import type { RequestPolicy } from '../shared/approval-policy';
import { allowsFrom, groupsNow, policyGroupWords, policyProgress } from '../shared/pending-policy';

/** A request's policy as it starts: nobody has allowed yet, not escalated. */
export function pendingPolicy(policy: RequestPolicy): PendingPolicy {
  return { ...policy, allowed: [], escalated: false };
}

/** Who may decide now, in the order the policy names them. */
function eligibleApprovers(policy: PendingPolicy): string[] {
  return [...new Set(groupsNow(policy).flatMap((group) => group.members))];
}

/** Whose decision it counts as: the delegator's when the decider holds a delegation. */
export function countedAs(decision: ApprovalDecision): string {
  return decision.delegation?.from ?? decision.by;
}

/** Throws why `decision` may not count towards this request; touches nothing. */
export function checkPolicyDecision(policy: PendingPolicy, decision: ApprovalDecision): void {
  const approver = countedAs(decision);
  const who = decision.delegation ? `${decision.by} (for ${approver})` : approver;
  if (!eligibleApprovers(policy).includes(approver)) {
    throw new Error(
      `${who} may not decide tool call ${decision.toolCallId}: the approval policy (${policy.rule}) asks ${policyGroupWords(policy)}`,
    );
  }
  // A reject is always heard (it may stop the call), also from someone who allowed before.
  if (decision.decision === 'reject_once' || decision.decision === 'reject_always') return;
  if (policy.allowed.some((allow) => allow.by === approver)) {
    throw new Error(
      `${approver} has allowed tool call ${decision.toolCallId} already: each approver counts once (${policyProgress(policy)})`,
    );
  }
  // A quorum is of distinct people: whoever decided once, for themselves or in another's place, counts no more.
  if (policy.allowed.some((allow) => (allow.via ?? allow.by) === decision.by)) {
    throw new Error(
      `${decision.by} has allowed tool call ${decision.toolCallId} already: a quorum counts distinct people (${policyProgress(policy)})`,
    );
  }
}

/**
 * Counts a decision the checks passed. Returns the request's decision once there is one: a reject
 * (when one stops it), or an allow once a group's quorum has allowed, `allow_always` only when every
 * allow counted said always, by all of them. Undefined: it waits for more.
 */
export function countPolicyDecision(
  policy: PendingPolicy,
  decision: ApprovalDecision,
): ApprovalDecision | undefined {
  if (decision.decision === 'reject_once' || decision.decision === 'reject_always') {
    return policy.rejectStops ? decision : undefined;
  }
  policy.allowed.push({
    by: countedAs(decision),
    decision: decision.decision,
    ...(decision.delegation ? { via: decision.by } : {}),
  });
  const met = groupsNow(policy).find((group) => allowsFrom(policy, group).length >= group.quorum);
  if (!met) return undefined;
  const counted = allowsFrom(policy, met);
  const kind: ApprovalDecisionKind = counted.every((allow) => allow.decision === 'allow_always')
    ? 'allow_always'
    : 'allow_once';
  return {
    ...decision,
    decision: kind,
    by: counted.map((allow) => (allow.via ? `${allow.via} for ${allow.by}` : allow.by)).join(', '),
  };
}
