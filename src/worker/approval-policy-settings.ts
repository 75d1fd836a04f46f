import { readFileSync } from 'node:fs';
import { type ApprovalPolicy, ApprovalPolicySchema, policyApprovers } from '../shared/approval-policy';
import type { ApproverKeys } from '../shared/signed-decisions';
import { schemaProblems } from '../shared/schema-problems';

/**
 * AGENT_APPROVAL_POLICY: a JSON file with the operator's approval policy. Undefined when unset. A
 * file that is unreadable, breaks the schema (an unknown key too), or names an approver without a
 * key in DURABLE_AGENT_APPROVER_KEYS stops the worker: a quorum of names anyone could send would
 * be no quorum, so only signed decisions count.
 */
export function approvalPolicyFromEnv(
  env: NodeJS.ProcessEnv,
  approverKeys: ApproverKeys | undefined,
): ApprovalPolicy | undefined {
  const file = env.AGENT_APPROVAL_POLICY?.trim();
  if (!file) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`AGENT_APPROVAL_POLICY: cannot read ${file}: ${(error as Error).message}`);
  }
  const parsed = ApprovalPolicySchema.safeParse(json);
  if (!parsed.success) throw new Error(`AGENT_APPROVAL_POLICY: ${file}: ${schemaProblems(parsed.error)}`);
  if (!approverKeys) {
    throw new Error(
      'AGENT_APPROVAL_POLICY needs DURABLE_AGENT_APPROVER_KEYS: a policy counts signed decisions only',
    );
  }
  const keyless = policyApprovers(parsed.data).filter((name) => !Object.hasOwn(approverKeys, name));
  if (keyless.length > 0) {
    throw new Error(
      `AGENT_APPROVAL_POLICY: ${keyless.join(', ')} ${keyless.length === 1 ? 'has' : 'have'} no key in DURABLE_AGENT_APPROVER_KEYS`,
    );
  }
  return parsed.data;
}
