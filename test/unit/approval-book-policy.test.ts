import { generateKeyPairSync } from 'node:crypto';
import { signDecision, signDelegation } from '../../src/client/sign-decision';
import { type ApprovalPolicyInput, ApprovalPolicySchema } from '../../src/shared/approval-policy';
import type { ApprovalDecision, ApprovalSettings, RiskLevel } from '../../src/shared/approvals';
import type { AgentEvent } from '../../src/shared/events';
import {
  type ApprovalOutcome,
  ApprovalBook,
  type StandingDecisions,
} from '../../src/workflows/approval-book';
import { DecisionSignatures } from '../../src/workflows/decision-signatures';
import { EventLog } from '../../src/workflows/event-log';
import { rawPublicKey } from '../../src/worker/floor-settings';
import { forgetWaiters, settle } from '../support/fake-workflow-condition';

// The book waits with the workflow's `condition`; here on the test's fake timers, which skip hours at once.
jest.mock('@temporalio/workflow', () => jest.requireActual('../support/fake-workflow-condition'));

const MINUTE = 60_000;

beforeEach(() => {
  jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'], now: 1_000_000 });
});
afterEach(() => {
  forgetWaiters();
  jest.useRealTimers();
});

const GROUPS = { leads: ['alice', 'bob', 'carol'], oncall: ['dave'] };

/** A book of a conversation with `settings`, admitted under `policy` (none when absent). */
function bookUnder(
  policy: ApprovalPolicyInput | undefined,
  settings: ApprovalSettings = {},
  standing: StandingDecisions = {},
) {
  const events = new EventLog(1_000);
  const signatures = new DecisionSignatures();
  const book = new ApprovalBook('conv-1', settings, events, signatures, standing);
  book.enforce({
    approvalFloor: {},
    ...(policy ? { approvalPolicy: ApprovalPolicySchema.parse(policy) } : {}),
  });
  return { book, events, signatures };
}

/** A call of `toolName` at `risk`, asked in `asked` mode; its outcome so far. */
function ask(book: ApprovalBook, toolName: string, { risk = 'high', asked = 'ask', id = 'call-1' } = {}) {
  const state: { outcome?: ApprovalOutcome; error?: unknown } = {};
  book
    .decide(
      {
        toolCallId: id,
        toolName,
        arguments: '{"command":"make deploy"}',
        scope: toolName,
        risk: risk as RiskLevel,
        mode: 'ask',
        run: 1,
      },
      asked as 'ask' | 'auto',
    )
    .then(
      (outcome) => (state.outcome = outcome),
      (error: unknown) => (state.error = error),
    );
  return state;
}

/** Applies `decision` (to call-1 unless it names another) and lets the waiting call see it. */
async function decide(
  book: ApprovalBook,
  by: string,
  decision: ApprovalDecision['decision'],
  extra: Partial<ApprovalDecision> = {},
) {
  const receipt = book.apply({ toolCallId: 'call-1', decision, by, ...extra });
  await settle();
  return receipt;
}

const decided = (events: EventLog) =>
  events
    .all()
    .filter(
      (event): event is Extract<AgentEvent, { type: 'approval_decided' }> =>
        event.type === 'approval_decided',
    );

test('rejectStops false: a member’s reject is counted and the call waits on; the quorum’s allow runs it', async () => {
  const { book } = bookUnder({
    groups: GROUPS,
    rules: [{ match: { tools: ['exec'] }, approvers: 'leads', quorum: 2, rejectStops: false }],
  });
  const call = ask(book, 'exec');
  await settle();
  expect(await decide(book, 'alice', 'reject_once')).toMatchObject({
    waitingFor: '0 of 2 of leads have allowed',
  });
  expect(call.outcome).toBeUndefined();
  expect(book.pendingCount).toBe(1);
  await decide(book, 'bob', 'allow_once');
  await decide(book, 'carol', 'allow_once');
  expect(call.outcome).toEqual({ allowed: true });
});

test('a rule that covers calls by risk alone asks them under approval mode auto; calls it does not cover run', async () => {
  const { book } = bookUnder({
    groups: GROUPS,
    rules: [{ match: { risk: ['critical'] }, approvers: 'oncall' }],
  });
  const low = ask(book, 'web_fetch', { risk: 'low', asked: 'auto', id: 'call-low' });
  const critical = ask(book, 'web_fetch', { risk: 'critical', asked: 'auto' });
  await settle();
  expect(low.outcome).toEqual({ allowed: true });
  expect(critical.outcome).toBeUndefined();
  expect(book.pendingApprovals()).toEqual([
    expect.objectContaining({
      toolCallId: 'call-1',
      policy: expect.objectContaining({ group: expect.objectContaining({ name: 'oncall' }) }),
    }),
  ]);
  await decide(book, 'dave', 'allow_once');
  expect(critical.outcome).toEqual({ allowed: true });
});

describe('a standing decision made before the policy', () => {
  const policy: ApprovalPolicyInput = {
    groups: GROUPS,
    rules: [{ match: { tools: ['exec'] }, approvers: 'leads', quorum: 2 }],
  };

  test('one person’s "allow always" does not let a call the policy governs run unasked', async () => {
    const { book } = bookUnder(policy, {}, { exec: { decision: 'allow', by: 'alice' } });
    const call = ask(book, 'exec');
    await settle();
    expect(call.outcome).toBeUndefined();
    expect(book.pendingCount).toBe(1);
    // Without the policy the same standing allow runs it at once.
    const unpoliced = ask(
      bookUnder(undefined, {}, { exec: { decision: 'allow', by: 'alice' } }).book,
      'exec',
    );
    await settle();
    expect(unpoliced.outcome).toEqual({ allowed: true });
  });

  test('a quorum’s "allow always" does, and a standing reject still stops the call', async () => {
    const quorum = ask(
      bookUnder(policy, {}, { exec: { decision: 'allow', by: 'alice, bob', quorum: true } }).book,
      'exec',
    );
    const rejected = ask(bookUnder(policy, {}, { exec: { decision: 'reject', by: 'carol' } }).book, 'exec');
    await settle();
    expect(quorum.outcome).toEqual({ allowed: true });
    expect(rejected.outcome).toMatchObject({
      allowed: false,
      blockedBy: 'approval',
      reason: expect.stringMatching(/rejected for this conversation by carol/),
    });
  });
});

describe('the conversation’s approval timeout beside the policy’s expiry: the sooner rejects', () => {
  const expiring = (afterMs: number): ApprovalPolicyInput => ({
    groups: GROUPS,
    rules: [
      {
        match: { tools: ['exec'] },
        approvers: 'leads',
        expire: { afterMs, reason: 'nobody approved the deploy in time' },
      },
    ],
  });

  test('the conversation’s timeout first: rejected by the timeout', async () => {
    const { book, events } = bookUnder(expiring(30 * MINUTE), { timeoutMs: 10 * MINUTE });
    const call = ask(book, 'exec');
    await settle();
    expect(book.pendingApprovals()[0]!.expiresAt).toBe(1_000_000 + 10 * MINUTE);
    await jest.advanceTimersByTimeAsync(10 * MINUTE - 1);
    expect(call.outcome).toBeUndefined();
    await jest.advanceTimersByTimeAsync(1);
    expect(call.outcome).toEqual({
      allowed: false,
      blockedBy: 'approval_timeout',
      reason: 'approval timed out: no decision within 600s',
    });
    expect(decided(events)).toEqual([expect.objectContaining({ by: 'timeout', decision: 'reject_once' })]);
  });

  test('the policy’s expiry first: rejected by the policy, with its reason', async () => {
    const { book, events } = bookUnder(expiring(10 * MINUTE), { timeoutMs: 30 * MINUTE });
    const call = ask(book, 'exec');
    await settle();
    expect(book.pendingApprovals()[0]!.expiresAt).toBe(1_000_000 + 10 * MINUTE);
    await jest.advanceTimersByTimeAsync(10 * MINUTE - 1);
    expect(call.outcome).toBeUndefined();
    await jest.advanceTimersByTimeAsync(1);
    expect(call.outcome).toEqual({
      allowed: false,
      blockedBy: 'approval_timeout',
      reason: 'rejected by the approval policy: nobody approved the deploy in time',
    });
    expect(decided(events)).toEqual([
      expect.objectContaining({ by: 'policy', reason: 'nobody approved the deploy in time' }),
    ]);
  });
});

test('a delegation counts for nothing where no policy governs the call, even signed by the delegator', async () => {
  const pairs = Object.fromEntries(['bob', 'dave'].map((name) => [name, generateKeyPairSync('ed25519')]));
  const { book, signatures } = bookUnder(undefined);
  signatures.requireKeys(
    Object.fromEntries(
      Object.entries(pairs).map(([name, pair]) => [
        name,
        rawPublicKey(pair.publicKey.export({ format: 'pem', type: 'spki' }).toString(), name),
      ]),
    ),
  );
  const call = ask(book, 'exec');
  await settle();
  const [pending] = book.pendingApprovals();
  const now = Date.now();
  const decision = signDecision(
    'conv-1',
    {
      toolCallId: 'call-1',
      decision: 'allow_once',
      by: 'dave',
      argumentsSha256: pending!.argumentsSha256,
      delegation: signDelegation('bob', 'dave', now + 24 * 60 * MINUTE, pairs.bob!.privateKey),
    },
    pairs.dave!.privateKey,
    now,
  );
  expect(() => book.check(decision)).toThrow('a delegation counts only under an approval policy');
  expect(() => book.apply(decision)).toThrow('a delegation counts only under an approval policy');
  await settle();
  expect(call.outcome).toBeUndefined();
});

test('a member a group lists twice counts once towards its quorum', async () => {
  const { book } = bookUnder({
    groups: { leads: ['alice', 'alice', 'bob'] },
    rules: [{ match: { tools: ['exec'] }, approvers: 'leads', quorum: 2 }],
  });
  const call = ask(book, 'exec');
  await settle();
  expect(book.pendingApprovals()[0]!.policy!.group.members).toEqual(['alice', 'bob']);
  await decide(book, 'alice', 'allow_once');
  expect(() => book.apply({ toolCallId: 'call-1', decision: 'allow_once', by: 'alice' })).toThrow(
    /alice has allowed .* already/,
  );
  await settle();
  expect(call.outcome).toBeUndefined();
  await decide(book, 'bob', 'allow_once');
  expect(call.outcome).toEqual({ allowed: true });
});

test('once a request escalates, the rule’s own group still decides it beside the escalation’s', async () => {
  const { book, events } = bookUnder({
    groups: GROUPS,
    rules: [
      {
        match: { tools: ['exec'] },
        approvers: 'leads',
        quorum: 2,
        escalate: { afterMs: 15 * MINUTE, to: 'oncall' },
      },
    ],
  });
  const call = ask(book, 'exec');
  await settle();
  await decide(book, 'alice', 'allow_once');
  await jest.advanceTimersByTimeAsync(15 * MINUTE);
  expect(events.all().filter((event) => event.type === 'approval_escalated')).toHaveLength(1);
  expect(book.pendingApprovals()[0]!.policy).toMatchObject({ escalated: true, allowed: [{ by: 'alice' }] });
  await decide(book, 'bob', 'allow_once');
  expect(call.outcome).toEqual({ allowed: true });
  expect(decided(events)).toEqual([expect.objectContaining({ decision: 'allow_once', by: 'alice, bob' })]);
});
