import type { PolicyGroup } from './approval-policy';
import type { PendingPolicy } from './approvals';

/** The groups whose members may decide now: the rule's, and once escalated, the escalation's too. */
export function groupsNow(policy: PendingPolicy): PolicyGroup[] {
  return policy.escalated && policy.escalation ? [policy.group, policy.escalation] : [policy.group];
}

/** The allows counted from members of `group`. */
export function allowsFrom(policy: PendingPolicy, group: PolicyGroup): PendingPolicy['allowed'] {
  return policy.allowed.filter((allow) => group.members.includes(allow.by));
}

/** "1 of 2 of leads have allowed", for receipts, refusals and pages. */
export function policyProgress(policy: PendingPolicy): string {
  return groupsNow(policy)
    .map((group) => `${allowsFrom(policy, group).length} of ${group.quorum} of ${group.name} have allowed`)
    .join('; ');
}

/** "2 of leads (alice, bob, carol)", or both groups once escalated. */
export function policyGroupWords(policy: PendingPolicy): string {
  return groupsNow(policy)
    .map((group) => `${group.quorum} of ${group.name} (${group.members.join(', ')})`)
    .join(' or ');
}

/**
 * What a person deciding should know of a request's policy, in one line: whom it asks, how far it
 * has come and who allowed, and its deadlines.
 */
export function policySummary(policy: PendingPolicy): string {
  const allowed = policy.allowed.map((allow) => (allow.via ? `${allow.via} for ${allow.by}` : allow.by));
  const parts = [
    `approval policy ${policy.rule}: asks ${policyGroupWords(policy)}`,
    `${policyProgress(policy)}${allowed.length > 0 ? ` (${allowed.join(', ')})` : ''}`,
  ];
  if (policy.escalation && !policy.escalated) {
    parts.push(`goes to ${policy.escalation.name} too at ${new Date(policy.escalation.at).toISOString()}`);
  }
  if (policy.expiry) parts.push(`rejected at ${new Date(policy.expiry.at).toISOString()}`);
  return parts.join('; ');
}
