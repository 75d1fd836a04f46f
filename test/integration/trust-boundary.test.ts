import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { promisify } from 'node:util';
import nock from 'nock';
import { WorkflowFailedError, WorkflowUpdateFailedError } from '@temporalio/client';
import type { ApprovalDecision, ApprovalDecisionKind } from '../../src/shared/approvals';
import { approveUpdate, pendingApprovalsQuery, stateQuery } from '../../src/shared/conversation-api';
import { signedDecisionText } from '../../src/shared/signed-decisions';
import { rawPublicKey } from '../../src/worker/floor-settings';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { recordTool, recorded } from '../support/test-tools';
import { waitFor } from '../support/test-worker';

/**
 * What a client of the task queue sends is a request, not a right: the worker holds conversations
 * to its operator's floors, and where approver keys are configured a decision counts only signed.
 */
const alice = generateKeyPairSync('ed25519');
const mallory = generateKeyPairSync('ed25519');
const pem = (key: typeof alice.publicKey) => key.export({ format: 'pem', type: 'spki' }).toString();

const harness = useNockedHarness([recordTool], {
  floors: { approval: { record: 'ask', exec: 'always' }, execSecurity: 'sandbox' },
  approverKeys: { alice: rawPublicKey(pem(alice.publicKey), 'alice') },
});
const handleOf = (id: string) => harness().client.workflow.getHandle(id);
const unique = (prefix: string) => `${prefix}_${randomUUID().slice(0, 8)}`;

async function refusedStart(
  options: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const id = unique('conv-refused');
  const script = nockModel([{ text: 'should never be asked' }]);
  const handle = await harness().client.workflow.start('conversation', {
    workflowId: id,
    taskQueue: harness().taskQueue,
    args: [{ options, initialMessage: { text: 'hello', messageId: 'm1' }, ...extra }],
  });
  const error = await handle.result().then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(WorkflowFailedError);
  expect(script.requests).toHaveLength(0);
  return (error as WorkflowFailedError).cause?.message ?? '';
}

test('a conversation asking for more than the worker allows is refused before anything runs', async () => {
  expect(await refusedStart({ workspace: '/' })).toMatch(
    /refused by the worker: the workspace \/ lies outside the directories this worker serves/,
  );
  expect(await refusedStart({ workspace: `${harness().workspace}/../` })).toMatch(/lies outside/);
  expect(await refusedStart({ approval: { mode: 'auto' } })).toMatch(
    /approval mode auto is below this worker's floor/,
  );
  expect(await refusedStart({ approval: { tools: { exec: 'ask' } } })).toMatch(
    /approval ask for exec is below this worker's floor \(always\)/,
  );
  expect(await refusedStart({ execSecurity: 'full' })).toMatch(
    /execSecurity full is looser than this worker allows/,
  );
  expect(
    await refusedStart(
      {},
      { carried: { standingApprovals: { record: { decision: 'allow', by: 'alice' } }, runCount: 0 } },
    ),
  ).toMatch(
    /carried state \(standingApprovals, runCount\) is accepted only from this conversation's own earlier run/,
  );
});

interface Pending {
  id: string;
  toolCallId: string;
  sha: string;
}

/** A conversation whose model asks to record `value`; returns once the call waits for approval. */
async function pendingRecord(value: string, toolCallId = unique('call_rec')): Promise<Pending> {
  const id = unique('conv-signed');
  nockModel([{ toolCalls: [{ id: toolCallId, name: 'record', arguments: { value } }] }, { text: 'done' }]);
  // Asking for `auto` on `record` is below the floor, so it asks however the conversation starts.
  await harness().agent.send(id, 'record it');
  const pending = await waitFor(async () => {
    const all = await handleOf(id).query(pendingApprovalsQuery);
    return all.find((approval) => approval.toolCallId === toolCallId);
  }, 'the record call waiting for approval');
  return { id, toolCallId, sha: pending.argumentsSha256 };
}

function signed(
  pending: Pending,
  overrides: {
    by?: string;
    decision?: ApprovalDecisionKind;
    expiresAt?: number;
    sha?: string;
    key?: typeof alice.privateKey;
  } = {},
): ApprovalDecision {
  const by = overrides.by ?? 'alice';
  const decision = overrides.decision ?? 'allow_once';
  const expiresAt = overrides.expiresAt ?? Date.now() + 5 * 60_000;
  const text = signedDecisionText({
    conversationId: pending.id,
    toolCallId: pending.toolCallId,
    argumentsSha256: overrides.sha ?? pending.sha,
    decision,
    by,
    expiresAt,
  });
  return {
    toolCallId: pending.toolCallId,
    decision,
    by,
    argumentsSha256: pending.sha,
    signature: sign(null, Buffer.from(text), overrides.key ?? alice.privateKey).toString('base64'),
    signatureExpiresAt: expiresAt,
  };
}

async function refusal(id: string, decision: ApprovalDecision): Promise<string> {
  const error = await handleOf(id)
    .executeUpdate(approveUpdate, { args: [decision] })
    .then(
      () => undefined,
      (failure: unknown) => failure,
    );
  expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
  return (error as WorkflowUpdateFailedError).cause?.message ?? '';
}

test('with approver keys only a signed decision counts: unsigned, forged, expired, other arguments, unknown approvers and replays are refused', async () => {
  const pending = await pendingRecord('signed-value');
  const unsigned = { toolCallId: pending.toolCallId, decision: 'allow_once' as const, by: 'alice' };
  expect(await refusal(pending.id, unsigned)).toMatch(/signed decisions only/);
  expect(await refusal(pending.id, signed(pending, { key: mallory.privateKey }))).toMatch(/not alice's/);
  expect(await refusal(pending.id, signed(pending, { expiresAt: Date.now() - 1_000 }))).toMatch(/expired/);
  expect(await refusal(pending.id, signed(pending, { expiresAt: Date.now() + 3 * 60 * 60_000 }))).toMatch(
    /valid for more than 60 minutes/,
  );
  expect(await refusal(pending.id, signed(pending, { sha: 'f'.repeat(64) }))).toMatch(/not alice's/);
  expect(await refusal(pending.id, { ...signed(pending), argumentsSha256: 'f'.repeat(64) })).toMatch(
    /for other arguments/,
  );
  expect(await refusal(pending.id, signed(pending, { by: 'mallory', key: mallory.privateKey }))).toMatch(
    /mallory has no approver key/,
  );
  // A signature over allow_once does not make an allow_always.
  expect(await refusal(pending.id, { ...signed(pending), decision: 'allow_always' })).toMatch(/not alice's/);
  // Nothing refused changed the conversation.
  expect(await handleOf(pending.id).query(pendingApprovalsQuery)).toHaveLength(1);
  expect(recorded.has(pending.toolCallId)).toBe(false);

  const decision = signed(pending);
  await handleOf(pending.id).executeUpdate(approveUpdate, { args: [decision] });
  await waitFor(async () => recorded.get(pending.toolCallId), 'the approved call to run');
  expect(recorded.get(pending.toolCallId)).toBe('signed-value');

  // The model asks for the very same call again, under a new id: the signed
  // decision, replayed as it was or moved to the new call, approves nothing.
  const again = await pendingRecordIn(pending.id, 'signed-value');
  expect(again.sha).toBe(pending.sha);
  expect(await refusal(pending.id, decision)).toMatch(/was already decided/);
  expect(await refusal(pending.id, { ...decision, toolCallId: again.toolCallId })).toMatch(/not alice's/);
  expect(recorded.has(again.toolCallId)).toBe(false);
});

/** The same conversation's next run asks to record `value` again; returns once that call waits. */
async function pendingRecordIn(id: string, value: string): Promise<Pending> {
  await waitFor(
    async () => ((await handleOf(id).query(stateQuery)).status === 'idle' ? true : undefined),
    'the first run to end',
  );
  nock.cleanAll();
  nockModel([{ toolCalls: [{ id: 'call_again', name: 'record', arguments: { value } }] }, { text: 'done' }]);
  await harness().agent.send(id, 'again');
  const pending = await waitFor(async () => {
    const all = await handleOf(id).query(pendingApprovalsQuery);
    return all.find((approval) => approval.toolName === 'record');
  }, 'the repeated call waiting for approval');
  return { id, toolCallId: pending.toolCallId, sha: pending.argumentsSha256 };
}

test('a signed decision sent with the temporal CLI as a plain signal approves the call', async () => {
  const cli = process.env.TEST_TEMPORAL_CLI;
  if (!cli) throw new Error('no Temporal CLI: the global setup builds one');
  const pending = await pendingRecord('from-the-cli');
  const run = (decision: ApprovalDecision) =>
    promisify(execFile)(cli, [
      'workflow',
      'signal',
      '--address',
      process.env.TEST_TEMPORAL_ADDRESS!,
      '--workflow-id',
      pending.id,
      '--name',
      'approve',
      '--input',
      JSON.stringify(decision),
    ]);
  // A forged one is ignored, saying why, and changes nothing.
  await run(signed(pending, { key: mallory.privateKey }));
  await waitFor(async () => {
    const { events } = await handleOf(pending.id).query(stateQuery);
    return events.find(
      (event) => event.type === 'error' && /approve ignored: .*not alice's/.test(event.message),
    );
  }, 'the forged signal to be ignored');
  expect(recorded.has(pending.toolCallId)).toBe(false);
  await run(signed(pending));
  await waitFor(
    async () => recorded.get(pending.toolCallId),
    'the call approved by the signed signal to run',
  );
  expect(recorded.get(pending.toolCallId)).toBe('from-the-cli');
});
