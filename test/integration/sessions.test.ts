import { randomUUID } from 'node:crypto';
import { ConversationNotFoundError } from '../../src/shared/conversation-errors';
import { ask } from '../support/ask';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import type { ChatRequest } from '../support/scripted-model';
import { waitFor } from '../support/test-worker';
import { waitForEvent } from '../support/wait-for-event';

const harness = useNockedHarness([]);
const newId = () => `conv-${randomUUID()}`;

function toolResultIn(request: ChatRequest, toolCallId: string): Record<string, unknown> {
  const message = request.messages.find((candidate) => candidate.tool_call_id === toolCallId);
  if (!message?.content) throw new Error(`no tool result for ${toolCallId}`);
  return JSON.parse(message.content) as Record<string, unknown>;
}

/** Waits until visibility lists the conversation, so sessions_list can see it. */
async function listed(conversationId: string): Promise<void> {
  await waitFor(async () => {
    for await (const listing of harness().agent.list()) {
      if (listing.conversationId === conversationId) return true;
    }
    return undefined;
  }, `${conversationId} in visibility`);
}

test('a conversation lists, inspects, reads and messages another one, and gets its answer', async () => {
  const other = newId();
  const caller = newId();
  // Requests come one at a time: the other conversation answers its first message, then the caller
  // runs its tools; sessions_send's wait lets the other conversation's run happen in between.
  const script = nockModel([
    { text: 'I am the other one.' },
    {
      toolCalls: [
        { id: 'call_list', name: 'sessions_list', arguments: {} },
        { id: 'call_status', name: 'session_status', arguments: { session_id: other } },
        { id: 'call_self', name: 'session_status', arguments: {} },
        { id: 'call_history', name: 'sessions_history', arguments: { session_id: other } },
      ],
    },
    {
      toolCalls: [
        {
          id: 'call_send',
          name: 'sessions_send',
          arguments: { session_id: other, text: 'ping', wait_seconds: 60 },
        },
      ],
    },
    { text: 'pong' },
    { text: 'The other one said pong.' },
  ]);

  const introduced = await ask(harness().agent, other, 'Who are you?');
  expect(introduced.finished).toMatchObject({ answer: 'I am the other one.' });
  await harness().agent.start(caller, { approval: { mode: 'auto' } });
  await listed(other);
  await listed(caller);

  const asked = await ask(harness().agent, caller, 'Talk to the other conversation.');
  expect(asked.finished).toMatchObject({ outcome: 'answered', answer: 'The other one said pong.' });

  const afterReads = script.requests[2]!;
  const sessions = toolResultIn(afterReads, 'call_list').sessions as Array<{
    sessionId: string;
    self?: boolean;
  }>;
  expect(sessions).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ sessionId: other }),
      expect.objectContaining({ sessionId: caller, self: true }),
    ]),
  );
  expect(toolResultIn(afterReads, 'call_status')).toMatchObject({
    sessionId: other,
    executionStatus: 'RUNNING',
    status: 'idle',
    runCount: 1,
    transcriptLength: 2,
  });
  expect(toolResultIn(afterReads, 'call_self')).toMatchObject({
    sessionId: caller,
    self: true,
    status: 'running',
  });
  expect(toolResultIn(afterReads, 'call_history')).toEqual({
    sessionId: other,
    transcriptLength: 2,
    messages: [
      { index: 0, role: 'user', text: 'Who are you?' },
      { index: 1, role: 'assistant', text: 'I am the other one.' },
    ],
  });

  // The other conversation's model saw the message, labelled with who sent it.
  const otherSaw = script.requests[3]!.messages.at(-1);
  expect(otherSaw).toEqual({ role: 'user', content: `[message from session ${caller}]\nping` });
  expect(toolResultIn(script.requests[4]!, 'call_send')).toEqual({
    status: 'answered',
    sessionId: other,
    messageId: `${caller}:call_send`,
    outcome: 'answered',
    answer: 'pong',
  });
  const otherState = await harness().agent.state(other);
  expect(otherState.transcript.map((message) => message.role)).toEqual([
    'user',
    'assistant',
    'user',
    'assistant',
  ]);
  expect(script.exhausted).toBe(false);
});

test('sessions_send refuses unknown sessions without creating them, and asks for approval by default', async () => {
  const missing = newId();
  const caller = newId();
  const script = nockModel([
    {
      toolCalls: [
        { id: 'call_send', name: 'sessions_send', arguments: { session_id: missing, text: 'hello?' } },
      ],
    },
    { text: 'It does not exist.' },
  ]);
  await harness().agent.send(caller, 'Message a conversation that does not exist.');
  const handle = harness().client.workflow.getHandle(caller);
  const asking = await waitForEvent(handle, 'approval_requested');
  expect(asking).toMatchObject({ toolName: 'sessions_send', risk: 'medium' });
  await harness().agent.approve(caller, { toolCallId: 'call_send', decision: 'allow_once', by: 'tester' });
  expect(await waitForEvent(handle, 'run_finished')).toMatchObject({ outcome: 'answered' });
  expect(toolResultIn(script.requests[1]!, 'call_send')).toEqual({
    status: 'error',
    tool: 'sessions_send',
    error: `no session ${missing}; sessions_list shows the open ones`,
  });
  await expect(harness().agent.execution(missing)).rejects.toBeInstanceOf(ConversationNotFoundError);
});

test('session tools see only conversations: another task queue’s workflow or a bad id is not found', async () => {
  const caller = newId();
  const foreign = newId();
  // A conversation workflow on a queue this worker does not serve: another deployment's business.
  const foreignHandle = await harness().client.workflow.start('conversation', {
    workflowId: foreign,
    taskQueue: `elsewhere-${randomUUID()}`,
    args: [{}],
  });
  const script = nockModel([
    {
      toolCalls: [
        { id: 'call_bad', name: 'sessions_history', arguments: { session_id: '../../etc/passwd' } },
        { id: 'call_none', name: 'session_status', arguments: { session_id: 'conv-does-not-exist' } },
        { id: 'call_foreign', name: 'sessions_send', arguments: { session_id: foreign, text: 'hi' } },
      ],
    },
    { text: 'ok' },
  ]);
  try {
    await ask(harness().agent, caller, 'Look around.', { options: { approval: { mode: 'auto' } } });
  } finally {
    await foreignHandle.terminate('test over');
  }
  expect(toolResultIn(script.requests[1]!, 'call_bad')).toMatchObject({
    status: 'error',
    error: expect.stringMatching(/invalid conversation id/),
  });
  expect(toolResultIn(script.requests[1]!, 'call_none')).toMatchObject({
    status: 'error',
    error: 'no session conv-does-not-exist; sessions_list shows the open ones',
  });
  expect(toolResultIn(script.requests[1]!, 'call_foreign')).toMatchObject({
    status: 'error',
    error: `no session ${foreign}; sessions_list shows the open ones`,
  });
});
