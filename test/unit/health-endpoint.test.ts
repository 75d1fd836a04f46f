import type { Worker } from '@temporalio/worker';
import type { DurableAgentPlugin } from '../../src/worker/agent-plugin';
import { AgentWorker } from '../../src/worker/agent-worker';
import { healthEndpointFrom, startHealthEndpoint } from '../../src/worker/health-endpoint';

async function probe(port: number, path: string, method = 'GET') {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { method });
  return { status: response.status, body: method === 'HEAD' ? '' : await response.text() };
}

test('/ready follows whether the worker polls; /healthz answers while the process serves', async () => {
  let polling = false;
  const endpoint = await startHealthEndpoint({ host: '127.0.0.1', port: 0 }, () => polling);
  try {
    // Starting: alive, not ready.
    expect(await probe(endpoint.port, '/healthz')).toEqual({ status: 200, body: '{"live":true}' });
    expect(await probe(endpoint.port, '/ready')).toEqual({ status: 503, body: '{"ready":false}' });
    polling = true;
    expect(await probe(endpoint.port, '/ready')).toEqual({ status: 200, body: '{"ready":true}' });
    expect((await probe(endpoint.port, '/ready', 'HEAD')).status).toBe(200);
    // Draining: still alive, no longer ready.
    polling = false;
    expect(await probe(endpoint.port, '/ready?verbose=1')).toEqual({ status: 503, body: '{"ready":false}' });
    expect(await probe(endpoint.port, '/healthz')).toEqual({ status: 200, body: '{"live":true}' });
    expect((await probe(endpoint.port, '/metrics')).status).toBe(404);
    expect((await probe(endpoint.port, '/ready', 'POST')).status).toBe(405);
  } finally {
    await endpoint.close();
  }
});

test('the probes are off unless a port is named, on loopback unless a host is, and a bad port is refused', () => {
  expect(healthEndpointFrom(undefined, {})).toBeUndefined();
  expect(healthEndpointFrom(undefined, { DURABLE_AGENT_HEALTH_PORT: '' })).toBeUndefined();
  expect(healthEndpointFrom(undefined, { DURABLE_AGENT_HEALTH_PORT: '8080' })).toEqual({
    host: '127.0.0.1',
    port: 8080,
  });
  // The flag wins over the variable.
  expect(
    healthEndpointFrom('9000', { DURABLE_AGENT_HEALTH_PORT: '8080', DURABLE_AGENT_HEALTH_HOST: '0.0.0.0' }),
  ).toEqual({ host: '0.0.0.0', port: 9000 });
  for (const bad of ['0', '65536', 'http', '80.5', '-1']) {
    expect(() => healthEndpointFrom(bad, {})).toThrow(
      `the health port is a number from 1 to 65535, not "${bad}"`,
    );
  }
});

// The SDK reports its pollers as POLLING before the worker runs and for a moment after it is told to
// stop: only the run state says whether it takes work.
test('a worker counts as polling only while it runs with both of its pollers polling', () => {
  const withStatus = (runState: string, workflowPollerState: string, activityPollerState: string) =>
    new AgentWorker(
      { getStatus: () => ({ runState, workflowPollerState, activityPollerState }) } as unknown as Worker,
      {} as DurableAgentPlugin,
    ).isPolling();
  expect(withStatus('RUNNING', 'POLLING', 'POLLING')).toBe(true);
  expect(withStatus('INITIALIZED', 'POLLING', 'POLLING')).toBe(false);
  expect(withStatus('STOPPING', 'POLLING', 'POLLING')).toBe(false);
  expect(withStatus('RUNNING', 'POLLING', 'SHUTDOWN')).toBe(false);
  expect(withStatus('RUNNING', 'FAILED', 'POLLING')).toBe(false);
});
