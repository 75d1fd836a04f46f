import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type ApprovalPolicyInput, ApprovalPolicySchema, policyFor } from '../../src/shared/approval-policy';
import { approvalPolicyFromEnv } from '../../src/worker/approval-policy-settings';

const KEYS = { alice: 'a', bob: 'b', carol: 'c', dave: 'd' };
const POLICY: ApprovalPolicyInput = {
  groups: { leads: ['alice', 'bob', 'carol'], oncall: ['dave'] },
  rules: [
    { name: 'exec', match: { tools: ['bash'] }, approvers: 'leads', quorum: 2 },
    { name: 'files', match: { tools: ['group:fs'], risk: ['high', 'critical'] }, approvers: 'oncall' },
    {
      match: { risk: ['critical'] },
      approvers: 'leads',
      escalate: { afterMs: 60_000, to: 'oncall' },
      expire: { afterMs: 120_000, reason: 'too late' },
    },
  ],
};

/** The loader on a file holding `policy`, with these approver keys (null: none configured). */
async function loaded(policy: unknown, keys: Record<string, string> | null = KEYS) {
  const file = path.join(await mkdtemp(path.join(os.tmpdir(), 'policy-')), 'policy.json');
  await writeFile(file, typeof policy === 'string' ? policy : JSON.stringify(policy));
  return () => approvalPolicyFromEnv({ AGENT_APPROVAL_POLICY: file }, keys ?? undefined);
}

test('the first rule that covers a call governs it: by tool name (aliases too), tool group and risk', () => {
  const policy = ApprovalPolicySchema.parse(POLICY);
  expect(policyFor(policy, { toolName: 'exec', risk: 'high' }, 1_000)).toEqual({
    rule: 'exec',
    group: { name: 'leads', members: ['alice', 'bob', 'carol'], quorum: 2 },
    rejectStops: true,
  });
  expect(policyFor(policy, { toolName: 'write', risk: 'high' }, 0)?.rule).toBe('files');
  expect(policyFor(policy, { toolName: 'read', risk: 'low' }, 0)).toBeUndefined();
  expect(policyFor(policy, { toolName: 'web_fetch', risk: 'critical' }, 1_000)).toEqual({
    rule: 'rule 3',
    group: { name: 'leads', members: ['alice', 'bob', 'carol'], quorum: 1 },
    rejectStops: true,
    escalation: { name: 'oncall', members: ['dave'], quorum: 1, at: 61_000 },
    expiry: { at: 121_000, reason: 'too late' },
  });
  expect(policyFor(undefined, { toolName: 'exec', risk: 'high' }, 0)).toBeUndefined();
});

test('a policy file that is wrong stops the worker, saying what is wrong', async () => {
  expect((await loaded(POLICY))()).toEqual(ApprovalPolicySchema.parse(POLICY));
  expect(await loaded({ ...POLICY, quorums: {} })).toThrow(/unknown key "quorums"/);
  expect(await loaded('{ not json')).toThrow(/AGENT_APPROVAL_POLICY: cannot read/);
  expect(await loaded({ groups: POLICY.groups, rules: [{ approvers: 'admins' }] })).toThrow(
    /no group admins/,
  );
  expect(await loaded({ groups: POLICY.groups, rules: [{ approvers: 'oncall', quorum: 2 }] })).toThrow(
    /a quorum of 2 of oncall, which has 1 members/,
  );
  expect(
    await loaded({
      groups: POLICY.groups,
      rules: [
        {
          approvers: 'leads',
          escalate: { afterMs: 10, to: 'oncall' },
          expire: { afterMs: 5, reason: 'x' },
        },
      ],
    }),
  ).toThrow(/it expires before it escalates/);
  expect(
    await loaded({
      groups: POLICY.groups,
      rules: [{ match: { tools: ['group:nope'] }, approvers: 'leads' }],
    }),
  ).toThrow(/no tool group group:nope/);
  expect(await loaded(POLICY, null)).toThrow(/needs DURABLE_AGENT_APPROVER_KEYS/);
  expect(await loaded(POLICY, { alice: 'a', bob: 'b' })).toThrow(/carol, dave have no key/);
  expect(approvalPolicyFromEnv({}, KEYS)).toBeUndefined();
});
