import { ENDED_KEPT_MS, LiveModelCalls } from '../../src/activities/live-model-calls';
import { LocalCancelRequests } from '../../src/activities/local-cancel-requests';
import { followRemoteModelText } from '../../src/client/remote-model-text';
import type { ModelTextDelta } from '../../src/client/live-model-text';
import { startLiveEndpoint } from '../../src/worker/live-endpoint';
import { liveEndpointFromEnv } from '../../src/worker/live-endpoint-settings';
import { announceCancelRequest, liveEndpointOfIdentity } from '../../src/worker/remote-cancel-announcer';

/** Records the runs it is told about instead of asking a server. */
class HeardCancels extends LocalCancelRequests {
  readonly heard: string[] = [];
  override requested(runId: string): void {
    this.heard.push(runId);
  }
}

async function until(check: () => boolean): Promise<void> {
  for (let tries = 0; !check(); tries++) {
    if (tries > 200) throw new Error('never happened');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test("a model call's text from the push endpoint: what came before the watcher, each piece after, then the end", async () => {
  const calls = new LiveModelCalls();
  const endpoint = await startLiveEndpoint({
    host: '127.0.0.1',
    port: 0,
    calls,
    cancels: new HeardCancels(),
  });
  try {
    const tap = calls.open('conv-a', 'run/1#1');
    expect(tap.url).toMatch(new RegExp(`^${endpoint.url}/model-text/[A-Za-z0-9_-]{24}$`));
    tap.append('Hello');
    const seen: ModelTextDelta[] = [];
    const follow = followRemoteModelText({ url: tap.url! }, 'mine', 'conv-a', (delta) => seen.push(delta));
    await until(() => seen.length === 1);
    tap.append(', world');
    await until(() => seen.length === 2);
    tap.end();
    expect(seen).toEqual([
      { conversationId: 'conv-a', call: 'mine', offset: 0, text: 'Hello' },
      { conversationId: 'conv-a', call: 'mine', offset: 5, text: ', world' },
    ]);
    follow.stop();
    // Without the token there is nothing to read.
    expect((await fetch(`${endpoint.url}/model-text/${'x'.repeat(24)}`)).status).toBe(404);
    expect((await fetch(`${endpoint.url}/`)).status).toBe(404);
  } finally {
    await endpoint.close();
  }
});

/** Counts the follows the endpoint asks for and has not stopped: the watchers it holds on to. */
class CountedFollows extends LiveModelCalls {
  private held = 0;
  get following(): number {
    return this.held;
  }
  override follow(token: string, listener: (delta: ModelTextDelta | 'end') => void) {
    const stop = super.follow(token, listener);
    if (!stop) return undefined;
    this.held++;
    let stopped = false;
    return () => {
      if (!stopped) this.held--;
      stopped = true;
      stop();
    };
  }
}

/** A watcher reading the endpoint's stream as it comes over the wire, until the server ends it. */
async function watchRaw(url: string) {
  const response = await fetch(url);
  let text = '';
  let ended = false;
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>)
      text += decoder.decode(chunk, { stream: true });
    ended = true;
  })().catch(() => undefined);
  return { status: response.status, text: () => text, ended: () => ended };
}

const tokenOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);
const piece = (offset: number, text: string) =>
  `data: ${JSON.stringify({ conversationId: 'conv-a', call: 'run/1#1', offset, text })}\n\n`;
const END_EVENT = 'event: end\ndata: {}\n\n';

test("when the call ends, a watcher's stream carries the end event and closes", async () => {
  const calls = new LiveModelCalls();
  const endpoint = await startLiveEndpoint({
    host: '127.0.0.1',
    port: 0,
    calls,
    cancels: new HeardCancels(),
  });
  try {
    const tap = calls.open('conv-a', 'run/1#1');
    tap.append('Hello');
    const watcher = await watchRaw(tap.url!);
    await until(() => watcher.text() === piece(0, 'Hello'));
    tap.end();
    await until(watcher.ended);
    expect(watcher.text()).toBe(piece(0, 'Hello') + END_EVENT);
  } finally {
    await endpoint.close();
  }
});

test('a watcher whose connection closes is let go of: the call no longer holds its listener', async () => {
  const calls = new CountedFollows();
  const endpoint = await startLiveEndpoint({
    host: '127.0.0.1',
    port: 0,
    calls,
    cancels: new HeardCancels(),
  });
  try {
    const tap = calls.open('conv-a', 'run/1#1');
    tap.append('Hello');
    const seen: ModelTextDelta[] = [];
    const follow = followRemoteModelText({ url: tap.url! }, 'mine', 'conv-a', (delta) => seen.push(delta));
    await until(() => seen.length === 1);
    expect(calls.following).toBe(1);
    // The call goes on; only the watcher leaves.
    follow.stop();
    await until(() => calls.following === 0);

    // And what the endpoint stops is gone from the call: a later piece reaches no one.
    const heard: Array<ModelTextDelta | 'end'> = [];
    const stop = calls.follow(tokenOf(tap.url!), (delta) => heard.push(delta))!;
    stop();
    tap.append(', world');
    tap.end();
    expect(heard).toEqual([{ conversationId: 'conv-a', call: 'run/1#1', offset: 0, text: 'Hello' }]);
  } finally {
    await endpoint.close();
  }
});

test('a watcher that arrives after the call ended still gets its whole text, then the end', async () => {
  const calls = new LiveModelCalls();
  const endpoint = await startLiveEndpoint({
    host: '127.0.0.1',
    port: 0,
    calls,
    cancels: new HeardCancels(),
  });
  try {
    const tap = calls.open('conv-a', 'run/1#1');
    tap.append('Hello');
    tap.append(', world');
    tap.end();
    const watcher = await watchRaw(tap.url!);
    expect(watcher.status).toBe(200);
    await until(watcher.ended);
    expect(watcher.text()).toBe(piece(0, 'Hello, world') + END_EVENT);
  } finally {
    await endpoint.close();
  }
});

test('an ended call is kept for late watchers for ENDED_KEPT_MS, then forgotten', () => {
  jest.useFakeTimers();
  try {
    const calls = new LiveModelCalls();
    calls.baseUrl = 'http://127.0.0.1:9';
    const tap = calls.open('conv-a', 'run/1#1');
    const token = tokenOf(tap.url!);
    tap.append('Hello');
    jest.advanceTimersByTime(ENDED_KEPT_MS * 2);
    expect(calls.has(token)).toBe(true);
    tap.end();
    jest.advanceTimersByTime(ENDED_KEPT_MS - 1);
    expect(calls.has(token)).toBe(true);
    jest.advanceTimersByTime(1);
    expect(calls.has(token)).toBe(false);
  } finally {
    jest.useRealTimers();
  }
});

test('a cancel request reaches the workers named by the run’s pending activities, never this one', async () => {
  const elsewhere = new HeardCancels();
  const other = await startLiveEndpoint({
    host: '127.0.0.1',
    port: 0,
    calls: new LiveModelCalls(),
    cancels: elsewhere,
  });
  const here = new HeardCancels();
  const own = await startLiveEndpoint({
    host: '127.0.0.1',
    port: 0,
    calls: new LiveModelCalls(),
    cancels: here,
  });
  try {
    const connection = {
      workflowService: {
        describeWorkflowExecution: async () => ({
          pendingActivities: [
            { lastWorkerIdentity: `1@a ${other.url}` },
            { lastWorkerIdentity: `2@b ${own.url}` },
            { lastWorkerIdentity: '3@c' },
          ],
        }),
      },
    } as unknown as Parameters<typeof announceCancelRequest>[0];
    announceCancelRequest(connection, 'default', own.url, 'conv-a', 'run-1');
    await until(() => elsewhere.heard.length === 1);
    expect(elsewhere.heard).toEqual(['run-1']);
    expect(here.heard).toEqual([]);
  } finally {
    await other.close();
    await own.close();
  }
});

test('AGENT_LIVE_ENDPOINT and AGENT_LIVE_URL', () => {
  expect(liveEndpointFromEnv({})).toEqual({ host: '127.0.0.1', port: 0 });
  expect(liveEndpointFromEnv({ AGENT_LIVE_ENDPOINT: 'off' })).toBeUndefined();
  expect(
    liveEndpointFromEnv({ AGENT_LIVE_ENDPOINT: '0.0.0.0:7290', AGENT_LIVE_URL: 'http://worker-3:7290' }),
  ).toEqual({
    host: '0.0.0.0',
    port: 7290,
    advertisedUrl: 'http://worker-3:7290',
  });
  expect(() => liveEndpointFromEnv({ AGENT_LIVE_ENDPOINT: '0.0.0.0:7290' })).toThrow(/set AGENT_LIVE_URL/);
  expect(() => liveEndpointFromEnv({ AGENT_LIVE_ENDPOINT: 'nowhere' })).toThrow(/must be host:port/);
  expect(liveEndpointOfIdentity('12@host http://127.0.0.1:4000')).toEqual({ url: 'http://127.0.0.1:4000' });
  expect(liveEndpointOfIdentity('12@host')).toBeUndefined();
});
