import type { RunToFollow } from '../../src/client/agent-client';
import { type RunEnd, endsRun, learnRun, runEndFromResult } from '../../src/client/run-end';
import type { AgentEvent } from '../../src/shared/events';
import { FakeConversation } from '../support/fake-conversation';

const started = (seq: number, run: number, messageIds: string[]): AgentEvent => ({
  type: 'run_started',
  seq,
  at: seq,
  run,
  messageIds,
});
const finished = (seq: number, run: number, messageIds: string[], answer: string): AgentEvent => ({
  type: 'run_finished',
  seq,
  at: seq,
  run,
  messageIds,
  outcome: 'answered',
  answer,
});
const steered = (seq: number, run: number, messageId: string): AgentEvent => ({
  type: 'steered',
  seq,
  at: seq,
  run,
  messageId,
  text: 'this instead',
  interrupted: [],
});

/** Every event the follower yields, and how it ended. */
async function follow(
  conversation: FakeConversation,
  run: Omit<RunToFollow, 'conversationId'>,
  signal?: AbortSignal,
) {
  const seen: AgentEvent[] = [];
  const events = conversation.agent.followRun(
    { conversationId: 'conv-1', ...run },
    { pollMs: 5, ...(signal ? { signal } : {}) },
  );
  for (;;) {
    const next = await events.next();
    if (next.done) return { seen, end: next.value };
    seen.push(next.value);
  }
}

describe('the end check', () => {
  test('a run ends the message it took, not the run of another message', () => {
    expect(endsRun(finished(5, 2, ['a', 'm'], 'x'), { messageId: 'm' })).toBe(true);
    expect(endsRun(finished(5, 2, ['a'], 'x'), { messageId: 'm' })).toBe(false);
    expect(endsRun(started(5, 2, ['m']), { messageId: 'm' })).toBe(false);
  });

  test('a steering message joins the run it steers: that run’s end is its end', () => {
    let sought = learnRun({ messageId: 'm' }, steered(4, 3, 'm'));
    expect(sought).toEqual({ messageId: 'm', run: 3 });
    expect(endsRun(finished(6, 3, ['first'], 'x'), sought)).toBe(true);
    sought = learnRun({ messageId: 'm' }, steered(4, 3, 'other'));
    expect(endsRun(finished(6, 3, ['first'], 'x'), sought)).toBe(false);
  });

  test('runs seen starting without the message are runs that did not take it', () => {
    expect(learnRun({ messageId: 'm', afterRun: 1 }, started(3, 2, ['a']))).toEqual({
      messageId: 'm',
      afterRun: 2,
    });
    expect(learnRun({ messageId: 'm', afterRun: 2 }, started(4, 3, ['a', 'm']))).toEqual({
      messageId: 'm',
      afterRun: 2,
      run: 3,
    });
  });

  test('an ended conversation’s result is the run’s end only when its last run is surely that run', () => {
    const result = { runs: 2, outcome: 'answered' as const, answer: 'Done.' };
    const seen = { lastSeq: 7, closedAt: 9_000 };
    expect(runEndFromResult({ messageId: 'm', run: 2 }, result, seen)).toMatchObject({
      type: 'run_finished',
      run: 2,
      seq: 7,
      at: 9_000,
      messageIds: ['m'],
      answer: 'Done.',
    });
    expect(runEndFromResult({ messageId: 'm', run: 1 }, result, seen)).toBeUndefined();
    // Sent while run 1 was going: only run 2 could take it.
    expect(runEndFromResult({ messageId: 'm', afterRun: 1 }, result, seen)).toMatchObject({ run: 2 });
    // Sent before run 1 began: run 1 or run 2 took it, the result cannot say which.
    expect(runEndFromResult({ messageId: 'm', afterRun: 0 }, result, seen)).toBeUndefined();
    expect(runEndFromResult({ messageId: 'm', run: 2 }, { runs: 2 }, seen)).toBeUndefined();
    expect(runEndFromResult({}, result, seen)).toBeUndefined();
  });
});

describe('AgentClient.followRun', () => {
  test('yields the events after afterSeq and ends with the run_finished of the run that took the message', async () => {
    const conversation = new FakeConversation();
    conversation.events = [started(1, 1, ['before'])];
    setTimeout(() => {
      conversation.events.push(
        finished(2, 1, ['before'], 'not this one'),
        started(3, 2, ['m']),
        finished(4, 2, ['m'], 'yours'),
        started(5, 3, ['later']),
      );
    }, 20);
    const { seen, end } = await follow(conversation, { afterSeq: 1, messageId: 'm', afterRun: 1 });
    expect(seen.map((event) => event.seq)).toEqual([2, 3, 4]);
    expect(end).toEqual({ how: 'finished', event: finished(4, 2, ['m'], 'yours'), from: 'events' });
  });

  test('a steering message is followed to the end of the run it joined', async () => {
    const conversation = new FakeConversation();
    conversation.events = [
      started(1, 4, ['first']),
      steered(2, 4, 'm'),
      finished(3, 4, ['first'], 'steered answer'),
    ];
    const { end } = await follow(conversation, { afterSeq: 1, messageId: 'm', afterRun: 3 });
    expect(end).toMatchObject({
      how: 'finished',
      from: 'events',
      event: { run: 4, answer: 'steered answer' },
    });
  });

  test('a conversation that ended while no worker answers for it any more: its result says how the run ended', async () => {
    const conversation = new FakeConversation();
    conversation.status = 'COMPLETED';
    conversation.answering = false;
    conversation.result = {
      runs: 1,
      messages: 2,
      endedBy: 'first_run',
      outcome: 'answered',
      answer: 'Done.',
    };
    const { seen, end } = await follow(conversation, { afterSeq: 0, messageId: 'm', afterRun: 0 });
    expect(seen).toEqual([]);
    expect(end).toEqual({
      how: 'finished',
      from: 'result',
      event: {
        type: 'run_finished',
        seq: 0,
        at: 9_000,
        run: 1,
        messageIds: ['m'],
        outcome: 'answered',
        answer: 'Done.',
      },
    });
    // Asked once: an ended conversation is not asked again and again.
    expect(conversation.queries).toBe(1);
  });

  test('the result of an ended conversation whose last run may not be the one followed is not taken for its end', async () => {
    const conversation = new FakeConversation();
    conversation.status = 'COMPLETED';
    conversation.answering = false;
    conversation.result = {
      runs: 1,
      messages: 2,
      endedBy: 'first_run',
      outcome: 'answered',
      answer: 'Done.',
    };
    // Sent during run 1 of a conversation that ends after its first run: no run took it.
    const { end } = await follow(conversation, { afterSeq: 3, messageId: 'm', afterRun: 1 });
    expect(end).toEqual({ how: 'conversation_ended', executionStatus: 'COMPLETED' });
  });

  test('every event read to the close and no end of the run: the conversation ended first, whatever its result', async () => {
    const conversation = new FakeConversation();
    conversation.status = 'COMPLETED';
    conversation.events = [started(1, 1, ['other']), finished(2, 1, ['other'], 'not yours')];
    conversation.result = { runs: 1, messages: 2, endedBy: 'end', outcome: 'answered', answer: 'not yours' };
    const { seen, end } = await follow(conversation, { afterSeq: 0, messageId: 'm' });
    expect(seen).toHaveLength(2);
    expect(end).toEqual({ how: 'conversation_ended', executionStatus: 'COMPLETED' });
  });

  test('a conversation that failed says why', async () => {
    const conversation = new FakeConversation();
    conversation.status = 'FAILED';
    conversation.answering = false;
    conversation.failure = 'the workspace lies outside the directories this worker serves';
    const { end } = await follow(conversation, { afterSeq: 0, messageId: 'm' });
    expect(end).toEqual({
      how: 'conversation_ended',
      executionStatus: 'FAILED',
      failure: 'the workspace lies outside the directories this worker serves',
    });
  });

  test('the caller’s signal stops following', async () => {
    const conversation = new FakeConversation();
    conversation.events = [started(1, 1, ['m'])];
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 30);
    const { seen, end } = await follow(conversation, { afterSeq: 0, messageId: 'm' }, stop.signal);
    expect(seen).toEqual([started(1, 1, ['m'])]);
    expect(end).toEqual<RunEnd>({ how: 'stopped' });
  });
});

test('a watch of a conversation that ended while no worker answers for it ends instead of failing', async () => {
  const conversation = new FakeConversation();
  conversation.status = 'COMPLETED';
  conversation.answering = false;
  const seen: AgentEvent[] = [];
  // The watch keeps asking for WATCH_QUERY_RETRY_MS after it saw the end (a worker may replay it): time is faked.
  jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate'] });
  try {
    const watched = (async () => {
      for await (const event of conversation.agent.watch('conv-1', { afterSeq: 0, pollMs: 5 }))
        seen.push(event);
    })();
    await jest.advanceTimersByTimeAsync(40_000);
    await watched;
  } finally {
    jest.useRealTimers();
  }
  expect(seen).toEqual([]);
});
