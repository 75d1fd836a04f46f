import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { ApprovalPolicyInput } from '../../src/shared/approval-policy';
import { ApprovalPolicySchema } from '../../src/shared/approval-policy';
import type { ApprovalDecision, ApprovalDecisionKind, PendingApproval } from '../../src/shared/approvals';
import { approveUpdate, pendingApprovalsQuery } from '../../src/shared/conversation-api';
import { signDelegation } from '../../src/client/sign-decision';
import { createGateway } from '../../src/http/gateway-app';
import { GatewayTokens } from '../../src/gateway/gateway-tokens';
import { signedDecisionText } from '../../src/shared/signed-decisions';
import { rawPublicKey } from '../../src/worker/floor-settings';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { waitFor } from '../support/test-worker';
import { eventsOf, waitForEvent } from '../support/wait-for-event';

const APPROVERS = ['alice', 'bob', 'carol', 'dave'] as const;
type Approver = (typeof APPROVERS)[number] | 'mallory';
const keys = Object.fromEntries(
  [...APPROVERS, 'mallory'].map((name) => [name, generateKeyPairSync('ed25519')]),
) as Record<Approver, ReturnType<typeof generateKeyPairSync>>;
const publicKey = (name: Approver) =>
  rawPublicKey(keys[name].publicKey.export({ format: 'pem', type: 'spki' }).toString(), name);

const POLICY: ApprovalPolicyInput = {
  groups: { leads: ['alice', 'bob', 'carol'], oncall: ['dave'] },
  rules: [{ name: 'exec by two leads', match: { tools: ['exec'] }, approvers: 'leads', quorum: 2 }],
};

const harness = useNockedHarness([], {
  // mallory signs with a key of her own, which the worker does not know.
  approverKeys: Object.fromEntries(APPROVERS.map((name) => [name, publicKey(name)])),
  approvalPolicy: ApprovalPolicySchema.parse(POLICY),
});
const handleOf = (id: string) => harness().client.workflow.getHandle(id);

interface Waiting {
  id: string;
  pending: PendingApproval;
  /** The file the command appends a line to each time it runs. */
  ranFile: string;
}

/** The conversations a test started: each is ended after it, so none outlives a failed test. */
const started: string[] = [];
afterEach(async () => {
  const ids = started.splice(0);
  await Promise.all(
    ids.map((id) =>
      handleOf(id)
        .terminate('the test is over')
        .catch(() => undefined),
    ),
  );
});

/** A conversation whose model asks to run a command that appends to a file; returns once the call waits. */
async function waitingExec(runs = 1): Promise<Waiting> {
  const id = `conv-policy-${randomUUID()}`;
  const ranFile = path.join(harness().workspace, `${id}.ran`);
  const toolCallId = `call_exec_${randomUUID().slice(0, 8)}`;
  started.push(id);
  // The model of this conversation alone, whose first message names it: a conversation of another
  // test (one that failed half-way) cannot take its answers. Each run runs the command.
  nockModel(
    Array.from({ length: runs }, (_, run) => [
      {
        toolCalls: [
          {
            id: run === 0 ? toolCallId : `${toolCallId}_${run + 1}`,
            name: 'exec',
            arguments: { command: `echo ran >> ${id}.ran` },
          },
        ],
      },
      { text: 'done' },
    ]).flat(),
    { only: (request) => JSON.stringify(request.messages).includes(id) },
  );
  await harness().agent.send(id, `deploy it (${id})`);
  const pending = await waitFor(
    async () =>
      (await handleOf(id).query(pendingApprovalsQuery)).find((call) => call.toolCallId === toolCallId),
    'the exec call waiting for approval',
  );
  return { id, pending, ranFile };
}

function signed(
  waiting: Waiting,
  by: Approver,
  decision: ApprovalDecisionKind = 'allow_once',
  sha = waiting.pending.argumentsSha256,
): ApprovalDecision {
  const expiresAt = Date.now() + 5 * 60_000 + Math.floor(Math.random() * 1_000);
  const text = signedDecisionText({
    conversationId: waiting.id,
    toolCallId: waiting.pending.toolCallId,
    argumentsSha256: sha,
    decision,
    by,
    expiresAt,
  });
  return {
    toolCallId: waiting.pending.toolCallId,
    decision,
    by,
    signature: sign(null, Buffer.from(text), keys[by].privateKey).toString('base64'),
    signatureExpiresAt: expiresAt,
  };
}

const decide = (waiting: Waiting, decision: ApprovalDecision) =>
  handleOf(waiting.id).executeUpdate(approveUpdate, { args: [decision] });

async function refusal(waiting: Waiting, decision: ApprovalDecision): Promise<string> {
  const error = await decide(waiting, decision).then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
  return (error as WorkflowUpdateFailedError).cause?.message ?? '';
}

const runs = (waiting: Waiting) =>
  existsSync(waiting.ranFile) ? readFileSync(waiting.ranFile, 'utf8').split('\n').filter(Boolean).length : 0;

test('exec under a quorum of two leads: one allow runs nothing, each approver counts once, outsiders and other arguments are refused, the second lead runs it once', async () => {
  const waiting = await waitingExec();
  expect(waiting.pending.policy).toMatchObject({
    rule: 'exec by two leads',
    group: { name: 'leads', members: ['alice', 'bob', 'carol'], quorum: 2 },
    allowed: [],
  });

  expect(await decide(waiting, signed(waiting, 'alice'))).toMatchObject({
    decision: 'allow_once',
    waitingFor: '1 of 2 of leads have allowed',
  });
  expect(await refusal(waiting, signed(waiting, 'alice'))).toMatch(
    /alice has allowed .* already: each approver counts once/,
  );
  expect(await refusal(waiting, signed(waiting, 'mallory'))).toMatch(/mallory may not decide .*2 of leads/);
  expect(await refusal(waiting, signed(waiting, 'dave'))).toMatch(/dave may not decide/);
  expect(await refusal(waiting, signed(waiting, 'bob', 'allow_once', 'f'.repeat(64)))).toMatch(/not bob's/);
  const stillWaiting = await handleOf(waiting.id).query(pendingApprovalsQuery);
  expect(stillWaiting.map((call) => call.policy?.allowed)).toEqual([
    [{ by: 'alice', decision: 'allow_once' }],
  ]);
  expect(runs(waiting)).toBe(0);

  await decide(waiting, signed(waiting, 'bob'));
  await waitForEvent(handleOf(waiting.id), 'run_finished');
  expect(runs(waiting)).toBe(1);
  const events = await eventsOf(handleOf(waiting.id));
  expect(events.find((event) => event.type === 'approval_requested')).toMatchObject({
    asks: 'approval policy exec by two leads: asks 2 of leads (alice, bob, carol); 0 of 2 of leads have allowed',
  });
  expect(events.filter((event) => event.type === 'approval_counted').map((event) => event.by)).toEqual([
    'alice',
    'bob',
  ]);
  expect(events.find((event) => event.type === 'approval_decided')).toMatchObject({
    decision: 'allow_once',
    by: 'alice, bob',
  });
});

test("through the gateway: the pending call says how far its quorum has come, and a lead's allow there counts as theirs", async () => {
  const waiting = await waitingExec();
  // The gateway signs as the token's identity with alice's key (its key is alice's in the keys file).
  const gateway = createGateway({
    agent: harness().agent,
    tokens: new GatewayTokens([{ name: 'alice', token: 'alice-token-for-the-policy-test', actions: ['*'] }]),
    signingKey: keys.alice.privateKey,
  });
  try {
    await gateway.listen({ port: 0, host: '127.0.0.1' });
    const { port } = gateway.server.address() as AddressInfo;
    const url = `http://127.0.0.1:${port}/v1/conversations/${waiting.id}/approvals`;
    const headers = {
      authorization: 'Bearer alice-token-for-the-policy-test',
      'content-type': 'application/json',
    };
    const allowed = await fetch(`${url}/${waiting.pending.toolCallId}`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ decision: 'allow_once', argumentsSha256: waiting.pending.argumentsSha256 }),
    });
    expect(await allowed.json()).toMatchObject({ waitingFor: '1 of 2 of leads have allowed' });
    const listed = await fetch(url, { headers });
    expect(await listed.json()).toMatchObject({
      pending: [
        {
          toolCallId: waiting.pending.toolCallId,
          policy: {
            group: { name: 'leads', quorum: 2 },
            allowed: [{ by: 'alice', decision: 'allow_once' }],
            progress: '1 of 2 of leads have allowed',
          },
        },
      ],
    });
    expect(runs(waiting)).toBe(0);
    await decide(waiting, signed(waiting, 'bob'));
    await waitForEvent(handleOf(waiting.id), 'run_finished');
    expect(runs(waiting)).toBe(1);
  } finally {
    await gateway.close();
  }
});

test('"allow always" stands for later calls only when every allow of the quorum said always', async () => {
  const once = await waitingExec(2);
  await decide(once, signed(once, 'alice', 'allow_always'));
  expect(await decide(once, signed(once, 'bob', 'allow_once'))).toMatchObject({ decision: 'allow_once' });
  await waitForEvent(handleOf(once.id), 'run_finished', (event) => event.run === 1);
  await harness().agent.send(once.id, 'again');
  // The next run's call asks again: the quorum did not allow always.
  await waitFor(
    async () => ((await handleOf(once.id).query(pendingApprovalsQuery)).length > 0 ? true : undefined),
    'the second call to ask',
  );
  expect(runs(once)).toBe(1);

  const always = await waitingExec(2);
  await decide(always, signed(always, 'alice', 'allow_always'));
  expect(await decide(always, signed(always, 'bob', 'allow_always'))).toMatchObject({
    decision: 'allow_always',
  });
  await waitForEvent(handleOf(always.id), 'run_finished', (event) => event.run === 1);
  await harness().agent.send(always.id, 'again');
  await waitForEvent(handleOf(always.id), 'run_finished', (event) => event.run === 2);
  // The next run's call ran without asking, allowed always by both.
  expect(runs(always)).toBe(2);
  const events = await eventsOf(handleOf(always.id));
  expect(events.filter((event) => event.type === 'approval_requested')).toHaveLength(1);
  expect(events.find((event) => event.type === 'approval_decided')).toMatchObject({
    decision: 'allow_always',
    by: 'alice, bob',
  });
});

test('a reject by a lead before the quorum stops the call, also from a lead who allowed before', async () => {
  const changedMind = await waitingExec();
  await decide(changedMind, signed(changedMind, 'alice'));
  await decide(changedMind, signed(changedMind, 'alice', 'reject_once'));
  await waitForEvent(handleOf(changedMind.id), 'run_finished');
  expect(runs(changedMind)).toBe(0);

  const waiting = await waitingExec();
  await decide(waiting, signed(waiting, 'alice'));
  await decide(waiting, { ...signed(waiting, 'carol', 'reject_once') });
  await waitForEvent(handleOf(waiting.id), 'run_finished');
  expect(await refusal(waiting, signed(waiting, 'bob'))).toMatch(/was already decided/);
  expect(runs(waiting)).toBe(0);
  const events = await eventsOf(handleOf(waiting.id));
  expect(events.find((event) => event.type === 'approval_decided')).toMatchObject({
    decision: 'reject_once',
    by: 'carol',
  });
  expect(events.find((event) => event.type === 'tool_execution_end')).toMatchObject({ isError: true });
});

test("a delegation from bob to dave: dave's allow counts as bob's, once; an expired or forged one, or one for someone else, does not", async () => {
  const day = 24 * 60 * 60_000;
  const asDave = (waiting: Waiting, delegation: ApprovalDecision['delegation']) => ({
    ...signed(waiting, 'dave'),
    delegation,
  });
  const bobToDave = signDelegation('bob', 'dave', Date.now() + day, keys.bob.privateKey);

  const expired = await waitingExec();
  await decide(expired, signed(expired, 'alice'));
  const lapsed = signDelegation('bob', 'dave', Date.now() - 1_000, keys.bob.privateKey);
  expect(await refusal(expired, asDave(expired, lapsed))).toMatch(/bob's delegation to dave expired/);
  const forged = signDelegation('bob', 'dave', Date.now() + day, keys.mallory.privateKey);
  expect(await refusal(expired, asDave(expired, forged))).toMatch(/the delegation is not bob's to dave/);
  // Made out to carol, it lets dave do nothing.
  const toCarol = signDelegation('bob', 'carol', Date.now() + day, keys.bob.privateKey);
  expect(await refusal(expired, asDave(expired, toCarol))).toMatch(/the delegation is not bob's to dave/);
  // For alice, who has allowed already, it counts nothing more.
  const aliceToDave = signDelegation('alice', 'dave', Date.now() + day, keys.alice.privateKey);
  expect(await refusal(expired, asDave(expired, aliceToDave))).toMatch(/alice has allowed .* already/);
  // Alice, who allowed as herself, holding bob's delegation too: a quorum counts distinct people.
  const bobToAlice = signDelegation('bob', 'alice', Date.now() + day, keys.bob.privateKey);
  expect(await refusal(expired, { ...signed(expired, 'alice'), delegation: bobToAlice })).toMatch(
    /alice has allowed .* already: a quorum counts distinct people/,
  );
  expect(runs(expired)).toBe(0);

  expect(await decide(expired, asDave(expired, bobToDave))).toMatchObject({ decision: 'allow_once' });
  await waitForEvent(handleOf(expired.id), 'run_finished');
  expect(runs(expired)).toBe(1);
  const events = await eventsOf(handleOf(expired.id));
  expect(events.find((event) => event.type === 'approval_decided')).toMatchObject({
    by: 'alice, dave for bob',
  });

  // Bob's own allow and dave's in his place count once between them.
  const twice = await waitingExec();
  await decide(twice, signed(twice, 'bob'));
  expect(await refusal(twice, asDave(twice, bobToDave))).toMatch(/bob has allowed .* already/);
  expect(runs(twice)).toBe(0);
});

test('a conversation asking for less than the policy is refused at admission, saying why', async () => {
  const refused = async (approval: Record<string, unknown>) => {
    const handle = await harness().client.workflow.start('conversation', {
      workflowId: `conv-policy-refused-${randomUUID()}`,
      taskQueue: harness().taskQueue,
      args: [{ options: { approval }, initialMessage: { text: 'hello', messageId: 'm1' } }],
    });
    const error = await handle.result().then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(WorkflowFailedError);
    return (error as WorkflowFailedError).cause?.message ?? '';
  };
  expect(await refused({ tools: { exec: 'auto' } })).toMatch(
    /approval auto for exec is looser than this worker's approval policy/,
  );
  expect(await refused({ mode: 'auto' })).toMatch(
    /approval mode auto is looser than this worker's approval policy/,
  );
  expect(await refused({ approvers: ['alice', 'dave'] })).toMatch(
    /approvers alice, dave cannot meet this worker's approval policy: exec by two leads needs 2 of leads/,
  );
});
