import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type ApprovalPolicyInput, ApprovalPolicySchema, policyFor } from '../../src/shared/approval-policy';
import { approvalPolicyFromEnv } from '../../src/worker/approval-policy-settings';
import { createAdmitConversation } from '../../src/activities/admit-conversation';
import type { AdmissionRequest } from '../../src/shared/worker-floors';

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

test('a rule may let a reject not stop the call; by default one does', () => {
  const policy = ApprovalPolicySchema.parse({
    groups: POLICY.groups,
    rules: [
      { match: { tools: ['exec'] }, approvers: 'leads', quorum: 2, rejectStops: false },
      { approvers: 'oncall' },
    ],
  });
  expect(policyFor(policy, { toolName: 'exec', risk: 'high' }, 0)?.rejectStops).toBe(false);
  expect(policyFor(policy, { toolName: 'read', risk: 'low' }, 0)?.rejectStops).toBe(true);
});

test('a member a group lists twice is one member: a quorum of two of them is refused, and requests name them once', () => {
  expect(() =>
    ApprovalPolicySchema.parse({
      groups: { leads: ['alice', 'alice'] },
      rules: [{ approvers: 'leads', quorum: 2 }],
    }),
  ).toThrow(/a quorum of 2 of leads, which has 1 members/);
  expect(() =>
    ApprovalPolicySchema.parse({
      groups: { leads: ['alice', 'bob'], oncall: ['dave', 'dave'] },
      rules: [{ approvers: 'leads', escalate: { afterMs: 10, to: 'oncall', quorum: 2 } }],
    }),
  ).toThrow(/a quorum of 2 of oncall, which has 1 members/);
  const policy = ApprovalPolicySchema.parse({
    groups: { leads: ['alice', 'bob', 'alice'], oncall: ['dave', 'dave'] },
    rules: [{ approvers: 'leads', quorum: 2, escalate: { afterMs: 10, to: 'oncall' } }],
  });
  expect(policyFor(policy, { toolName: 'exec', risk: 'high' }, 0)).toMatchObject({
    group: { members: ['alice', 'bob'] },
    escalation: { members: ['dave'] },
  });
});

describe('admission under a policy: tool aliases and groups name the tools they cover', () => {
  /** The worker's admission of a conversation with these approval settings, under `policy`. */
  async function admission(policy: ApprovalPolicyInput, approval: Record<string, unknown>) {
    const workspace = await mkdtemp(path.join(os.tmpdir(), 'admission-'));
    const admit = createAdmitConversation({
      defaultWorkspace: workspace,
      approvalPolicy: ApprovalPolicySchema.parse(policy),
    });
    return admit({ approval, carried: [], continued: false } as AdmissionRequest);
  }
  const ruling = (tools: string[]): ApprovalPolicyInput => ({
    groups: POLICY.groups,
    rules: [{ match: { tools }, approvers: 'leads' }],
  });

  test('a rule on `bash` governs exec, and one on exec governs `bash`', async () => {
    expect(await admission(ruling(['bash']), { tools: { exec: 'auto' } })).toMatchObject({
      admitted: false,
      reason: expect.stringMatching(/approval auto for exec is looser than this worker's approval policy/),
    });
    expect(await admission(ruling(['exec']), { tools: { bash: 'auto' } })).toMatchObject({
      admitted: false,
      reason: expect.stringMatching(/approval auto for bash is looser/),
    });
    expect(await admission(ruling(['exec']), { tools: { Exec: 'auto' } })).toMatchObject({ admitted: false });
  });

  test('a rule on group:fs governs each file tool, under its own name and under mode auto', async () => {
    expect(await admission(ruling(['group:fs']), { tools: { write: 'auto' } })).toMatchObject({
      admitted: false,
      reason: expect.stringMatching(/approval auto for write is looser/),
    });
    expect(await admission(ruling(['group:fs']), { mode: 'auto', tools: { read: 'ask' } })).toMatchObject({
      admitted: false,
      reason: expect.stringMatching(/approval mode auto is looser .* every write call/),
    });
    expect(await admission(ruling(['group:fs']), { tools: { exec: 'auto' } })).toMatchObject({
      admitted: true,
    });
  });

  test('a rule by risk alone leaves a conversation free to run in mode auto: its calls are asked anyway', async () => {
    const riskOnly: ApprovalPolicyInput = {
      groups: POLICY.groups,
      rules: [{ match: { risk: ['critical'] }, approvers: 'leads' }],
    };
    expect(await admission(riskOnly, { mode: 'auto' })).toMatchObject({ admitted: true });
    expect(await admission(ruling(['exec']), { mode: 'auto' })).toMatchObject({
      admitted: false,
      reason: expect.stringMatching(/approval mode auto is looser .* every exec call/),
    });
  });
});
