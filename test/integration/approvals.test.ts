import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import type { ApprovalDecision } from '../../src/shared/approvals';
import {
  approveSignal,
  approveUpdate,
  pendingApprovalsQuery,
  stateQuery,
  statusQuery,
  steerUpdate,
} from '../../src/shared/conversation-api';
import type { ConversationOptionsInput } from '../../src/shared/conversation-options';
import type { AgentEvent } from '../../src/shared/events';
import type { ChatRequest } from '../support/scripted-model';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { echoTool, recordTool, recorded } from '../support/test-tools';
import { waitFor } from '../support/test-worker';
import { eventsOf, waitForEvent } from '../support/wait-for-event';

const harness = useNockedHarness([echoTool, recordTool]);
const handleOf = (id: string) => harness().client.workflow.getHandle(id);
const unique = (prefix: string) => `${prefix}_${randomUUID().slice(0, 8)}`;

const recordCall = (id: string, value: string) => ({ id, name: 'record', arguments: { value } });
const toolMessages = (request: ChatRequest) =>
  request.messages.filter((message) => message.role === 'tool').map((message) => message.content);

async function start(id: string, text: string, options?: ConversationOptionsInput) {
  await harness().agent.send(id, text, { options });
  return handleOf(id);
}

function pendingFor(id: string, toolCallId: string) {
  return waitFor(async () => {
    const pending = await handleOf(id).query(pendingApprovalsQuery);
    return pending.find((approval) => approval.toolCallId === toolCallId);
  }, `an approval pending for ${toolCallId}`);
}

const decide = (id: string, decision: ApprovalDecision) =>
  handleOf(id).executeUpdate(approveUpdate, { args: [decision] });

/**
 * The trace an approve signal for `toolCallId` left once the workflow handled it: the error event
 * saying it was ignored, or the decision. A signal returns when the server has it, not when the
 * workflow has applied it, so state read before this is whatever it was.
 */
function signalHandled(handle: ReturnType<typeof handleOf>, toolCallId: string): Promise<AgentEvent> {
  return waitFor(async () => {
    const events = await eventsOf(handle);
    return events.find(
      (event) =>
        (event.type === 'error' && event.message.startsWith('approve ignored: ')) ||
        (event.type === 'approval_decided' && event.toolCallId === toolCallId),
    );
  }, `the approve signal for ${toolCallId} to be handled`);
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (failure: unknown) => failure,
  );
  expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
  return (error as WorkflowUpdateFailedError).cause?.message ?? '';
}

test('allow_once: the call waits, tools that need no approval run meanwhile, then it runs', async () => {
  const callId = unique('call_rec');
  nockModel([
    { toolCalls: [recordCall(callId, 'alpha'), { name: 'echo', arguments: { text: 'free' } }] },
    { text: 'Recorded.' },
  ]);
  const id = `conv-${randomUUID()}`;
  const handle = await start(id, 'Record alpha');
  const pending = await pendingFor(id, callId);
  expect(pending).toMatchObject({
    toolName: 'record',
    arguments: '{"value":"alpha"}',
    risk: 'medium',
    run: 1,
  });
  expect(typeof pending.requestedAt).toBe('number');
  // The echo call needs no approval and finishes while record waits.
  await waitForEvent(handle, 'tool_execution_end', (event) => event.toolName === 'echo');
  expect(recorded.has(callId)).toBe(false);
  expect((await handle.query(statusQuery)).pendingApprovals).toBe(1);

  const receipt = await decide(id, { toolCallId: callId, decision: 'allow_once', by: 'alice' });
  expect(receipt).toEqual({ toolCallId: callId, toolName: 'record', decision: 'allow_once' });
  expect(await waitForEvent(handle, 'run_finished')).toMatchObject({ outcome: 'answered' });
  expect(recorded.get(callId)).toBe('alpha');
  expect(await waitForEvent(handle, 'approval_decided')).toMatchObject({
    toolCallId: callId,
    decision: 'allow_once',
    by: 'alice',
  });

  // The decision and its approver are in history: the audit log.
  const history = await handle.fetchHistory();
  const accepted = history.events?.find((event) => event.workflowExecutionUpdateAcceptedEventAttributes);
  const input = accepted?.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input;
  expect(input?.name).toBe('approve');
  expect(Buffer.from(input!.args!.payloads![0]!.data!).toString()).toContain('"by":"alice"');

  // Deciding it again is refused.
  expect(await refusal(decide(id, { toolCallId: callId, decision: 'allow_once', by: 'alice' }))).toBe(
    `tool call ${callId} was already decided`,
  );
});

test('allow_always: later calls to the tool run without asking, for the rest of the conversation', async () => {
  const first = unique('call_first');
  const second = unique('call_second');
  nockModel([
    { toolCalls: [recordCall(first, 'one')] },
    { text: 'One.' },
    { toolCalls: [recordCall(second, 'two')] },
    { text: 'Two.' },
  ]);
  const id = `conv-${randomUUID()}`;
  const handle = await start(id, 'Record one');
  await pendingFor(id, first);
  await decide(id, { toolCallId: first, decision: 'allow_always', by: 'alice' });
  await waitForEvent(handle, 'run_finished');

  await harness().agent.send(id, 'Record two');
  await waitForEvent(handle, 'run_finished', (event) => event.run === 2);
  expect(recorded.get(second)).toBe('two');
  const requested = (await eventsOf(handle)).filter((event) => event.type === 'approval_requested');
  expect(requested.map((event) => event.run)).toEqual([1]);
  expect((await handle.query(stateQuery)).approvals.standing).toEqual({
    record: { decision: 'allow', by: 'alice' },
  });
});

test('reject: the call is not run and the model reads a blocked result with the reason', async () => {
  const callId = unique('call_rej');
  let followUp: ChatRequest | undefined;
  nockModel([
    { toolCalls: [recordCall(callId, 'secret')] },
    (request) => {
      followUp = request;
      return { text: 'Understood, not recording.' };
    },
  ]);
  const id = `conv-${randomUUID()}`;
  const handle = await start(id, 'Record the secret');
  await pendingFor(id, callId);
  await decide(id, { toolCallId: callId, decision: 'reject_once', by: 'bob', reason: 'not now' });
  await waitForEvent(handle, 'run_finished');
  expect(recorded.has(callId)).toBe(false);
  expect(toolMessages(followUp!)).toEqual([
    JSON.stringify({ status: 'blocked', tool: 'record', reason: 'rejected by bob: not now' }),
  ]);
});

test('the validator refuses an unknown toolCallId and an unlisted approver, leaving state untouched', async () => {
  const callId = unique('call_val');
  nockModel([{ toolCalls: [recordCall(callId, 'guarded')] }, { text: 'Done.' }]);
  const id = `conv-${randomUUID()}`;
  const handle = await start(id, 'Record guarded', { approval: { approvers: ['alice'] } });
  await pendingFor(id, callId);
  const before = await handle.query(stateQuery);

  expect(await refusal(decide(id, { toolCallId: 'call_nope', decision: 'allow_once', by: 'alice' }))).toBe(
    'no approval is pending for tool call call_nope',
  );
  expect(await refusal(decide(id, { toolCallId: callId, decision: 'allow_once', by: 'mallory' }))).toBe(
    'mallory may not approve tool calls in this conversation',
  );
  expect(await refusal(decide(id, { toolCallId: callId, decision: 'maybe' as never, by: 'alice' }))).toMatch(
    /decision/,
  );
  expect(await handle.query(stateQuery)).toEqual(before);
  // Refused updates never reach history.
  const history = await handle.fetchHistory();
  expect(history.events?.some((event) => event.workflowExecutionUpdateAcceptedEventAttributes)).toBe(false);

  await decide(id, { toolCallId: callId, decision: 'allow_once', by: 'alice' });
  await waitForEvent(handle, 'run_finished');
  expect(recorded.get(callId)).toBe('guarded');
});

test('several pending approvals in one turn are decided independently', async () => {
  const yes = unique('call_yes');
  const no = unique('call_no');
  let followUp: ChatRequest | undefined;
  nockModel([
    { toolCalls: [recordCall(yes, 'keep'), recordCall(no, 'drop')] },
    (request) => {
      followUp = request;
      return { text: 'Half done.' };
    },
  ]);
  const id = `conv-${randomUUID()}`;
  const handle = await start(id, 'Record both');
  await pendingFor(id, yes);
  await pendingFor(id, no);
  await decide(id, { toolCallId: no, decision: 'reject_once', by: 'carol' });
  await waitForEvent(handle, 'tool_execution_end', (event) => event.toolCallId === no);
  expect((await handle.query(pendingApprovalsQuery)).map((approval) => approval.toolCallId)).toEqual([yes]);
  await decide(id, { toolCallId: yes, decision: 'allow_once', by: 'carol' });
  await waitForEvent(handle, 'run_finished');
  expect(recorded.get(yes)).toBe('keep');
  expect(recorded.has(no)).toBe(false);
  expect(toolMessages(followUp!)).toEqual([
    'recorded keep',
    JSON.stringify({ status: 'blocked', tool: 'record', reason: 'rejected by carol' }),
  ]);
});

test('an approval timeout rejects the call with that reason', async () => {
  const callId = unique('call_late');
  let followUp: ChatRequest | undefined;
  nockModel([
    { toolCalls: [recordCall(callId, 'late')] },
    (request) => {
      followUp = request;
      return { text: 'Nobody answered.' };
    },
  ]);
  const id = `conv-${randomUUID()}`;
  const handle = await start(id, 'Record late', { approval: { timeoutMs: 1_000 } });
  const pending = await pendingFor(id, callId);
  expect(pending.expiresAt).toBe(pending.requestedAt + 1_000);
  await waitForEvent(handle, 'run_finished');
  expect(recorded.has(callId)).toBe(false);
  expect(await waitForEvent(handle, 'approval_decided')).toMatchObject({
    decision: 'reject_once',
    by: 'timeout',
  });
  expect(toolMessages(followUp!)).toEqual([
    JSON.stringify({
      status: 'blocked',
      tool: 'record',
      reason: 'approval timed out: no decision within 1s',
    }),
  ]);
  // Readers learn it from the fields: on the transcript's message and on the event.
  const { transcript } = await harness().agent.state(id);
  expect(transcript.find((m) => m.role === 'toolResult' && m.toolCallId === callId)).toMatchObject({
    status: 'blocked',
    blockedBy: 'approval_timeout',
    reason: 'approval timed out: no decision within 1s',
  });
  expect(
    await waitForEvent(handle, 'tool_execution_end', (event) => event.toolCallId === callId),
  ).toMatchObject({ isError: true, status: 'blocked', blockedBy: 'approval_timeout' });
});

test('a service with only the temporal CLI approves with `temporal workflow signal`', async () => {
  const callId = unique('call_cli');
  nockModel([{ toolCalls: [recordCall(callId, 'by-cli')] }, { text: 'Done.' }]);
  const id = `conv-${randomUUID()}`;
  const handle = await start(id, 'Record by cli');
  await pendingFor(id, callId);

  // A malformed decision sent by signal cannot be refused; it is recorded as an error and changes
  // nothing. The error event is the sign the workflow has handled the signal: only then is the check meaningful.
  await handle.signal(approveSignal, { toolCallId: callId, decision: 'allow_once', by: '' });
  expect(await signalHandled(handle, callId)).toMatchObject({
    type: 'error',
    message: expect.stringMatching(/^approve ignored: [\s\S]*by \(the approver\) is empty/),
  });
  expect(await handle.query(pendingApprovalsQuery)).toHaveLength(1);

  await promisify(execFile)(process.env.TEST_TEMPORAL_CLI!, [
    'workflow',
    'signal',
    '--address',
    process.env.TEST_TEMPORAL_ADDRESS!,
    '--namespace',
    'default',
    '--workflow-id',
    id,
    '--name',
    'approve',
    '--input',
    JSON.stringify({ toolCallId: callId, decision: 'allow_once', by: 'ops-bot', reason: 'ticket 42' }),
  ]);
  await waitForEvent(handle, 'run_finished');
  expect(recorded.get(callId)).toBe('by-cli');
  expect(await waitForEvent(handle, 'approval_decided')).toMatchObject({
    by: 'ops-bot',
    reason: 'ticket 42',
  });
});

test('approval mode auto runs every tool without asking; a per-tool setting wins', async () => {
  const free = unique('call_free');
  const asked = unique('call_asked');
  nockModel([
    { toolCalls: [recordCall(free, 'free'), { id: asked, name: 'echo', arguments: { text: 'now asks' } }] },
    { text: 'Done.' },
  ]);
  const id = `conv-${randomUUID()}`;
  const handle = await start(id, 'Go', { approval: { mode: 'auto', tools: { echo: 'always' } } });
  await pendingFor(id, asked);
  await waitFor(async () => (recorded.get(free) === 'free' ? true : undefined), 'record to run unasked');
  await decide(id, { toolCallId: asked, decision: 'allow_once', by: 'dave' });
  await waitForEvent(handle, 'run_finished');
  const requested = (await eventsOf(handle)).filter((event) => event.type === 'approval_requested');
  expect(requested.map((event) => event.toolCallId)).toEqual([asked]);
});

test('a steer while a call waits for approval withdraws the request; the model hears the steer', async () => {
  const callId = unique('call_steered');
  let followUp: ChatRequest | undefined;
  nockModel([
    { toolCalls: [recordCall(callId, 'unwanted')] },
    (request) => {
      followUp = request;
      return { text: 'Okay, something else.' };
    },
  ]);
  const id = `conv-${randomUUID()}`;
  const handle = await start(id, 'Record unwanted');
  await pendingFor(id, callId);
  await handle.executeUpdate(steerUpdate, {
    args: [{ text: 'Never mind that', messageId: unique('steer') }],
  });
  await waitForEvent(handle, 'run_finished');
  expect(await handle.query(pendingApprovalsQuery)).toEqual([]);
  expect(recorded.has(callId)).toBe(false);
  expect(followUp!.messages.slice(-2)).toMatchObject([
    { role: 'tool', content: expect.stringContaining('"status":"aborted"') },
    { role: 'user', content: 'Never mind that' },
  ]);
  expect(await refusal(decide(id, { toolCallId: callId, decision: 'allow_once', by: 'alice' }))).toBe(
    `tool call ${callId} was withdrawn by a steer or abort`,
  );
});

describe('what the approver sees is what runs', () => {
  test('long arguments are shown whole with their hash; a decision for other arguments is refused, the right hash runs it', async () => {
    const callId = unique('call_long');
    // The dangerous part sits far past where an approver used to stop reading.
    const value = `${'harmless '.repeat(1_200)}and then rm -rf ~`;
    nockModel([{ toolCalls: [recordCall(callId, value)] }, { text: 'Recorded.' }]);
    const id = `conv-${randomUUID()}`;
    const handle = await start(id, 'Record a long value');
    const pending = await pendingFor(id, callId);
    const text = JSON.stringify({ value });
    expect(pending.arguments).toBe(text);
    expect(pending.argumentsLength).toBe(text.length);
    expect(pending.argumentsSha256).toBe(createHash('sha256').update(text).digest('hex'));
    expect(pending.argumentsTruncated).toBeUndefined();

    const forged = createHash('sha256').update('{"value":"harmless"}').digest('hex');
    expect(
      await refusal(
        decide(id, { toolCallId: callId, decision: 'allow_once', by: 'alice', argumentsSha256: forged }),
      ),
    ).toMatch(/for other arguments/);
    // The signal path ignores it the same way: the call still waits. A signal returns before the
    // workflow has handled it, so first wait for its effect, whichever it is: ignored, or decided.
    await handle.signal(approveSignal, {
      toolCallId: callId,
      decision: 'allow_once',
      by: 'alice',
      argumentsSha256: forged,
    });
    expect(await signalHandled(handle, callId)).toMatchObject({
      type: 'error',
      message: expect.stringMatching(/^approve ignored: .*for other arguments/),
    });
    expect((await handle.query(pendingApprovalsQuery)).map((approval) => approval.toolCallId)).toEqual([
      callId,
    ]);
    expect(recorded.has(callId)).toBe(false);

    await decide(id, {
      toolCallId: callId,
      decision: 'allow_once',
      by: 'alice',
      argumentsSha256: pending.argumentsSha256,
    });
    await waitForEvent(handle, 'run_finished');
    expect(recorded.get(callId)).toBe(value);
  });

  test('writing to a background process asks as exec does; other process actions do not', async () => {
    const listId = unique('call_list');
    const writeId = unique('call_write');
    nockModel([
      {
        toolCalls: [
          { id: listId, name: 'process', arguments: { action: 'list' } },
          { id: writeId, name: 'process', arguments: { action: 'write', id: 'p1', input: 'rm -rf ~\n' } },
        ],
      },
      { text: 'Done.' },
    ]);
    const id = `conv-${randomUUID()}`;
    const handle = await start(id, 'Feed the shell');
    const pending = await pendingFor(id, writeId);
    expect(pending).toMatchObject({ toolName: 'process', scope: 'exec', mode: 'ask' });
    await waitFor(async () => {
      const events = await eventsOf(handle);
      return (
        events.some((event) => event.type === 'tool_execution_end' && event.toolCallId === listId) ||
        undefined
      );
    }, 'the list call to run without asking');
    await decide(id, { toolCallId: writeId, decision: 'reject_once', by: 'alice' });
    await waitForEvent(handle, 'run_finished');
  });
});
