import { MessageIdConflictError } from '../../src/shared/conversation-errors';
import type { AgentEvent } from '../../src/shared/events';
import { messageFingerprint } from '../../src/shared/message-fingerprint';
import { FakeConversation } from '../support/fake-conversation';

// A Temporal frontend that is restarting answers nothing for a moment: every look at the workflow
// that send, execution and a follower make is asked again meanwhile. Time is faked: the retries
// pause a quarter and half a second.
beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] }));
afterEach(() => jest.useRealTimers());

const run = (type: 'run_started' | 'run_finished', seq: number): AgentEvent =>
  type === 'run_started'
    ? { type, seq, at: seq, run: 1, messageIds: ['m'] }
    : { type, seq, at: seq, run: 1, messageIds: ['m'], outcome: 'answered', answer: 'done' };

test('send reaches a running conversation after its describe() went unanswered twice', async () => {
  const conversation = new FakeConversation();
  conversation.events = [run('run_started', 1)];
  conversation.unansweredDescribes = 2;
  const sent = conversation.agent.send('conv-1', 'hello', { messageId: 'm2' });
  await jest.advanceTimersByTimeAsync(5_000);
  await expect(sent).resolves.toMatchObject({ conversationId: 'conv-1', afterSeq: 1, started: false });
  expect(conversation.signalled).toEqual([expect.objectContaining({ text: 'hello', messageId: 'm2' })]);
  expect(conversation.describes).toBe(3);
});

test('execution() answers after describe() went unanswered twice', async () => {
  const conversation = new FakeConversation();
  conversation.unansweredDescribes = 2;
  const described = conversation.agent.execution('conv-1');
  await jest.advanceTimersByTimeAsync(5_000);
  await expect(described).resolves.toMatchObject({ conversationId: 'conv-1', executionStatus: 'RUNNING' });
});

test('following a run goes on to its end after the poll’s describe() went unanswered twice', async () => {
  const conversation = new FakeConversation();
  conversation.events = [run('run_started', 1)];
  conversation.unansweredDescribes = 2;
  // The run ends after the server answers again, so the follower must have ridden out its describes.
  setTimeout(() => conversation.events.push(run('run_finished', 2)), 3_000);
  const seen: AgentEvent[] = [];
  const followed = (async () => {
    const following = conversation.agent.followRun(
      { conversationId: 'conv-1', afterSeq: 0, messageId: 'm' },
      { pollMs: 50 },
    );
    for (let next = await following.next(); ; next = await following.next()) {
      if (next.done) return next.value;
      seen.push(next.value);
    }
  })();
  await jest.advanceTimersByTimeAsync(5_000);
  await expect(followed).resolves.toEqual({ how: 'finished', event: run('run_finished', 2), from: 'events' });
  expect(seen.map((event) => event.seq)).toEqual([1, 2]);
  expect(conversation.describes).toBeGreaterThanOrEqual(3);
});

test('a message is delivered again while the server does not answer, for up to a minute: the conversation takes its id once', async () => {
  const conversation = new FakeConversation();
  conversation.unansweredSignals = 3;
  const sent = conversation.agent.send('conv-1', 'hello', { messageId: 'm2' });
  await jest.advanceTimersByTimeAsync(5_000);
  await expect(sent).resolves.toMatchObject({ messageId: 'm2', started: false });
  expect(conversation.signalled).toEqual([expect.objectContaining({ text: 'hello', messageId: 'm2' })]);
});

test('a server that does not come back fails the send after a minute', async () => {
  const conversation = new FakeConversation();
  conversation.unansweredSignals = 1_000;
  const sent = conversation.agent.send('conv-1', 'hello');
  const failed = expect(sent).rejects.toThrow('Failed to signal workflow');
  await jest.advanceTimersByTimeAsync(70_000);
  await failed;
  expect(conversation.signalled).toEqual([]);
});

test('a send retried by its caller is answered from the receipt of the first delivery and not signalled again', async () => {
  const conversation = new FakeConversation();
  conversation.events = [run('run_started', 1), run('run_finished', 2)];
  const fingerprint = messageFingerprint({ text: 'hello' });
  conversation.receipts.set('m1', { fingerprint, afterSeq: 0, afterRun: 0 });
  await expect(conversation.agent.send('conv-1', 'hello', { messageId: 'm1' })).resolves.toEqual({
    conversationId: 'conv-1',
    messageId: 'm1',
    afterSeq: 0,
    afterRun: 0,
    started: false,
    duplicate: true,
  });
  await expect(conversation.agent.send('conv-1', 'hello?', { messageId: 'm1' })).rejects.toThrow(
    MessageIdConflictError,
  );
  expect(conversation.signalled).toEqual([]);
});
