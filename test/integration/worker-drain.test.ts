import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { type Server, type Socket, connect, createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { AgentClient } from '../../src/client/agent-client';
import { freePort } from '../../src/platform/free-port';
import { agentDataConverter } from '../../src/worker/data-converter';
import { assertCliBuilt, startCli } from '../support/cli-process';
import { startScriptedModelServer } from '../support/scripted-model-server';
import { unclaimedPort } from '../support/unclaimed-port';
import { waitFor } from '../support/test-worker';
import { waitForEvent } from '../support/wait-for-event';

beforeAll(assertCliBuilt);

/** The status of a probe, or undefined while nothing listens. */
async function probe(port: number, route: string): Promise<number | undefined> {
  return fetch(`http://127.0.0.1:${port}${route}`).then(
    (response) => response.status,
    () => undefined,
  );
}

/**
 * A TCP relay from `port` to the test's Temporal server, started only when the test lets the
 * worker reach its server.
 */
async function relayToTemporal(port: number): Promise<{ close(): Promise<void> }> {
  const [host, upstreamPort] = process.env.TEST_TEMPORAL_ADDRESS!.split(':') as [string, string];
  const sockets = new Set<Socket>();
  const server: Server = createServer((downstream) => {
    const upstream = connect(Number(upstreamPort), host);
    for (const socket of [downstream, upstream]) {
      sockets.add(socket);
      socket.on('error', () => socket.destroy());
      socket.on('close', () => sockets.delete(socket));
    }
    downstream.pipe(upstream).pipe(downstream);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A command that says it started, then runs until the test creates `release` in the workspace. */
const HELD_COMMAND = 'touch started; until [ -e release ]; do sleep 0.1; done; echo released';

// What Kubernetes does to a worker's pod on a rollout: readiness gates it in, SIGTERM asks it to
// stop, and the running tool of a conversation must finish rather than be cut off.
test('a worker is ready only once it polls, and on SIGTERM turns unready, takes no new work and lets its running tool finish', async () => {
  const model = await startScriptedModelServer([
    { toolCalls: [{ id: 'call_held', name: 'exec', arguments: { command: HELD_COMMAND } }] },
    { text: 'The command finished.' },
  ]);
  const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-drain-'));
  const taskQueue = `drain-${randomUUID()}`;
  const healthPort = await freePort();
  // The draining worker reaches Temporal through a relay that is not there yet: it starts as a
  // pod does whose Temporal is not reachable yet.
  const relayPort = await unclaimedPort([healthPort]);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS,
    AGENT_TASK_QUEUE: taskQueue,
    OPENAI_BASE_URL: model.baseUrl,
    AGENT_MODEL: 'scripted-model',
  };
  const draining = startCli(['worker', '--workspace', workspace], {
    ...env,
    TEMPORAL_ADDRESS: `127.0.0.1:${relayPort}`,
    DURABLE_AGENT_HEALTH_PORT: String(healthPort),
  });
  const connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  let relay: { close(): Promise<void> } | undefined;
  let successor: ReturnType<typeof startCli> | undefined;
  try {
    await draining.stderrMatching(/does not answer yet/);
    expect(await probe(healthPort, '/healthz')).toBe(200);
    expect(await probe(healthPort, '/ready')).toBe(503);
    relay = await relayToTemporal(relayPort);
    await waitFor(async () => ((await probe(healthPort, '/ready')) === 200 ? true : undefined), 'ready');
    const client = new Client({ connection, dataConverter: agentDataConverter() });
    const agent = new AgentClient(client, taskQueue);
    const id = `conv-${randomUUID()}`;
    await agent.send(id, 'Run the held command', { options: { approval: { mode: 'auto' } } });
    await waitFor(
      async () => (existsSync(path.join(workspace, 'started')) ? true : undefined),
      'the command',
    );

    draining.kill('SIGTERM');
    await draining.stderrMatching(/Letting 1 running activities of other conversations finish/);
    await waitFor(async () => ((await probe(healthPort, '/ready')) === 503 ? true : undefined), 'unready');
    expect(await probe(healthPort, '/healthz')).toBe(200);

    // Let the command end: its result is reported by the draining worker, which then exits.
    await writeFile(path.join(workspace, 'release'), '');
    const exited = await draining.done;
    expect(exited.stderr).toContain('stopping…');
    // It made the first model call and ran the tool, and took nothing after it.
    expect(model.script.requests).toHaveLength(1);

    // The model call after the tool is new work: the draining worker left it to the next one.
    successor = startCli(['worker', '--workspace', workspace], env);
    const handle = client.workflow.getHandle(id);
    await waitForEvent(handle, 'run_finished');
    const ended = await waitForEvent(
      handle,
      'tool_execution_end',
      (event) => event.toolCallId === 'call_held',
    );
    expect(ended).toMatchObject({ isError: false });
    expect(ended.preview).toContain('released');
    expect(model.script.requests).toHaveLength(2);
  } finally {
    draining.kill('SIGKILL');
    successor?.kill('SIGTERM');
    await successor?.done;
    await relay?.close();
    await connection.close();
    await model.close();
  }
}, 120_000);
