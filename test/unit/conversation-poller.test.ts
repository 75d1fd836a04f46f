import { type WorkflowHandle, defaultPayloadConverter } from '@temporalio/client';
import { pollConversation, type PolledItem } from '../../src/client/conversation-poller';
import type { ActivityProgress } from '../../src/shared/tool-run';

/**
 * A model call names its worker's push endpoint in its first heartbeat. A watcher that saw the call
 * pending before that heartbeat looks again soon (describe() only), instead of at its next poll.
 */
const POLL_MS = 60_000;

function fakeConversation(describeResults: Array<Record<string, unknown>[]>) {
  const calls = { describe: 0, events: 0 };
  const handle = {
    workflowId: 'conv-1',
    client: {
      options: { dataConverter: { payloadCodecs: [] } },
      withAbortSignal: <T>(_signal: AbortSignal, call: () => Promise<T>) => call(),
    },
    query: () => {
      calls.events++;
      return Promise.resolve([]);
    },
    describe: () => {
      const pending = describeResults[Math.min(calls.describe, describeResults.length - 1)]!;
      calls.describe++;
      return Promise.resolve({
        runId: 'run-1',
        status: { name: 'RUNNING' },
        raw: { pendingActivities: pending },
      });
    },
  } as unknown as WorkflowHandle;
  return { handle, calls };
}

const modelCall = (heartbeat?: ActivityProgress) => ({
  activityId: '7',
  attempt: 1,
  activityType: { name: 'callModel' },
  ...(heartbeat ? { heartbeatDetails: { payloads: [defaultPayloadConverter.toPayload(heartbeat)] } } : {}),
});

const firstHeartbeat: ActivityProgress = { kind: 'model', text: '', textLength: 0, toolCalls: 0 };

async function firstProgress(poll: AsyncGenerator<PolledItem, unknown>): Promise<PolledItem> {
  for await (const item of poll) if (item.kind === 'progress') return item;
  throw new Error('the poll ended without progress');
}

test('a model call seen before its first heartbeat is looked at again before the next poll, and its heartbeat is seen', async () => {
  const { handle, calls } = fakeConversation([[modelCall()], [modelCall()], [modelCall(firstHeartbeat)]]);
  const stop = new AbortController();
  const poll = pollConversation(handle, 0, { pollMs: POLL_MS, signal: stop.signal });
  try {
    const item = await firstProgress(poll);
    expect(item).toMatchObject({ kind: 'progress', activityId: '7', progress: { kind: 'model' } });
    expect(calls.events).toBe(1);
    expect(calls.describe).toBe(3);
  } finally {
    stop.abort();
    await poll.return('RUNNING');
  }
});

test('other activities without a heartbeat are not looked at again before the next poll', async () => {
  const tool = { activityId: '8', attempt: 1, activityType: { name: 'runTool' } };
  const { handle, calls } = fakeConversation([[tool]]);
  const stop = new AbortController();
  const poll = pollConversation(handle, 0, { pollMs: POLL_MS, signal: stop.signal });
  const next = poll.next();
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(calls.describe).toBe(1);
  stop.abort();
  await next;
  await poll.return('RUNNING');
});

test('a model call that never heartbeats is looked at again for a bounded time only', async () => {
  const { handle, calls } = fakeConversation([[modelCall()]]);
  const stop = new AbortController();
  const poll = pollConversation(handle, 0, { pollMs: POLL_MS, signal: stop.signal });
  const next = poll.next();
  await new Promise((resolve) => setTimeout(resolve, 1_300));
  const afterTheBound = calls.describe;
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(afterTheBound).toBeGreaterThan(2);
  expect(calls.describe).toBe(afterTheBound);
  stop.abort();
  await next;
  await poll.return('RUNNING');
});
