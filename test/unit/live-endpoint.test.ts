import { LiveModelCalls } from '../../src/activities/live-model-calls';
import { LocalCancelRequests } from '../../src/activities/local-cancel-requests';
import { followRemoteModelText } from '../../src/client/remote-model-text';
import type { ModelTextDelta } from '../../src/client/live-model-text';
import { startLiveEndpoint } from '../../src/worker/live-endpoint';
import { liveEndpointFromEnv } from '../../src/worker/live-endpoint-settings';
import { announceCancelRequest, liveUrlOfIdentity } from '../../src/worker/remote-cancel-announcer';

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
    const follow = followRemoteModelText(tap.url!, 'mine', 'conv-a', (delta) => seen.push(delta));
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
  expect(liveUrlOfIdentity('12@host http://127.0.0.1:4000')).toBe('http://127.0.0.1:4000');
  expect(liveUrlOfIdentity('12@host')).toBeUndefined();
});
