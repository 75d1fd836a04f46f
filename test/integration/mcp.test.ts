import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import path from 'node:path';
import nock from 'nock';
import { McpToolSource } from '../../src/mcp/mcp-tool-source';
import { builtinTools } from '../../src/tools/builtin/builtin-tools';
import { ToolRegistry } from '../../src/tools/registry';
import { freePort } from '../../src/platform/free-port';
import type { ChatRequest } from '../support/scripted-model';
import { NOCK_MODEL_URL, nockModel } from '../support/nock-model';
import { type TestHarness, startHarness, waitFor } from '../support/test-worker';
import { eventsOf, waitForEvent, waitForHeartbeat } from '../support/wait-for-event';

/** The reference server from npm, over stdio and over streamable HTTP, as a user would configure it. */
const EVERYTHING = path.join(
  path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist',
  'index.js',
);
let httpServer: ChildProcess;
let port: number;
let source: McpToolSource;
let harness: TestHarness;

async function startHttpEverything(): Promise<ChildProcess> {
  const server = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let output = '';
    server.stderr!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (/listening on port/i.test(output)) resolve();
    });
    server.once('exit', (code) =>
      reject(new Error(`server-everything over HTTP exited (${code}): ${output}`)),
    );
  });
  return server;
}

beforeAll(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1|localhost/);
  port = await freePort();
  httpServer = await startHttpEverything();
  source = new McpToolSource({
    everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
    remote: { url: `http://127.0.0.1:${port}/mcp` },
    broken: { command: path.join(__dirname, 'no-such-mcp-server') },
  });
  harness = await startHarness({
    modelBaseUrl: NOCK_MODEL_URL,
    registry: new ToolRegistry(builtinTools(), [source]),
  });
});
afterAll(async () => {
  await harness?.close();
  await source?.close();
  if (httpServer && httpServer.exitCode === null && httpServer.signalCode === null) {
    const exited = once(httpServer, 'exit');
    httpServer.kill();
    await exited;
  }
  nock.cleanAll();
  nock.enableNetConnect();
});
afterEach(() => nock.cleanAll());

const toolResults = (request: ChatRequest) =>
  new Map(request.messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content]));

test("MCP tools are offered like built-ins, named server__tool, and called over stdio and HTTP; a server that won't start is a warning", async () => {
  let offered: string[] = [];
  let answered: ChatRequest | undefined;
  nockModel([
    (request) => {
      offered = (request.tools ?? []).map((tool) => tool.function.name);
      return {
        toolCalls: [
          { id: 'call_stdio', name: 'everything__echo', arguments: { message: 'over stdio' } },
          { id: 'call_http', name: 'remote__echo', arguments: { message: 'over HTTP' } },
          { id: 'call_sum', name: 'everything__get-sum', arguments: { a: 2, b: 40 } },
        ],
      };
    },
    (request) => {
      answered = request;
      return { text: 'Both answered.' };
    },
  ]);
  const id = `conv-${randomUUID()}`;
  const handle = harness.client.workflow.getHandle(id);
  await harness.agent.send(id, 'Use the MCP servers');
  expect(await waitForEvent(handle, 'run_finished')).toMatchObject({ outcome: 'answered' });

  expect(offered).toEqual(expect.arrayContaining(['everything__echo', 'remote__echo', 'read']));
  expect(offered.some((name) => name.startsWith('broken__'))).toBe(false);
  const results = toolResults(answered!);
  expect(results.get('call_stdio')).toMatch(/over stdio/);
  expect(results.get('call_http')).toMatch(/over HTTP/);
  expect(results.get('call_sum')).toMatch(/42/);
  const warnings = (await eventsOf(handle)).filter((event) => event.type === 'warning');
  expect(warnings.map((event) => event.type === 'warning' && event.message)).toEqual([
    expect.stringMatching(/MCP server broken offers no tools: MCP server broken did not start/),
  ]);
});

test("a progress-reporting MCP tool's notifications become the activity's heartbeats", async () => {
  nockModel([
    {
      toolCalls: [
        {
          id: 'call_long',
          name: 'everything__trigger-long-running-operation',
          arguments: { duration: 3, steps: 3 },
        },
      ],
    },
    (request) => ({ text: `done: ${toolResults(request).get('call_long')}` }),
  ]);
  const id = `conv-${randomUUID()}`;
  const handle = harness.client.workflow.getHandle(id);
  await harness.agent.send(id, 'Run the long operation');
  const details = await waitForHeartbeat(
    handle,
    (heartbeat) => (heartbeat as { details?: { progress?: number } }).details?.progress !== undefined,
  );
  expect(details).toMatchObject({ kind: 'tool', toolName: 'everything__trigger-long-running-operation' });
  expect((details as { text: string }).text).toMatch(/^progress \d\/3/);
  const finished = await waitForEvent(handle, 'run_finished');
  expect(finished.answer).toMatch(/Long running operation completed/);
});

test('a stdio server that dies is started again by the next call', async () => {
  const connection = source.connection('everything')!;
  const before = await waitFor(async () => connection.pid, 'a running stdio server');
  process.kill(before, 'SIGKILL');
  await waitFor(async () => (connection.pid === undefined ? true : undefined), 'the connection to notice');

  nockModel([
    { toolCalls: [{ id: 'call_again', name: 'everything__echo', arguments: { message: 'still here' } }] },
    (request) => ({ text: `${toolResults(request).get('call_again')}` }),
  ]);
  const id = `conv-${randomUUID()}`;
  await harness.agent.send(id, 'Echo again');
  const finished = await waitForEvent(harness.client.workflow.getHandle(id), 'run_finished');
  expect(finished.answer).toMatch(/still here/);
  expect(connection.pid).toBeDefined();
  expect(connection.pid).not.toBe(before);
});

test('a call in flight when its stdio server dies fails with a clear error, and a read-only tool is tried again on a new server', async () => {
  nockModel([
    {
      toolCalls: [
        {
          id: 'call_cut',
          name: 'everything__trigger-long-running-operation',
          arguments: { duration: 6, steps: 6 },
        },
      ],
    },
    (request) => ({ text: `after the crash: ${toolResults(request).get('call_cut')}` }),
  ]);
  const id = `conv-${randomUUID()}`;
  const handle = harness.client.workflow.getHandle(id);
  await harness.agent.send(id, 'Run the long operation, even if its server dies');
  await waitForHeartbeat(
    handle,
    (heartbeat) => (heartbeat as { details?: { progress?: number } }).details?.progress !== undefined,
  );
  const connection = source.connection('everything')!;
  const killed = connection.pid!;
  process.kill(killed, 'SIGKILL');

  const finished = await waitForEvent(handle, 'run_finished');
  expect(finished.answer).toMatch(/after the crash: .*Long running operation completed/);
  expect(connection.pid).not.toBe(killed);
  // The retried attempt's start records why the first one failed.
  const { events } = await handle.fetchHistory();
  const retried = (events ?? [])
    .map((event) => event.activityTaskStartedEventAttributes)
    .find((started) => (started?.attempt ?? 1) > 1);
  expect(retried?.lastFailure?.message).toMatch(
    /MCP server everything was unreachable or closed the connection during trigger-long-running-operation/,
  );
});

test('an HTTP server that restarts (forgetting its sessions) is reached again through a new session', async () => {
  httpServer.kill('SIGKILL');
  await once(httpServer, 'exit');
  httpServer = await startHttpEverything();

  nockModel([
    { toolCalls: [{ id: 'call_back', name: 'remote__echo', arguments: { message: 'after a restart' } }] },
    (request) => ({ text: `${toolResults(request).get('call_back')}` }),
  ]);
  const id = `conv-${randomUUID()}`;
  await harness.agent.send(id, 'Echo over HTTP again');
  const finished = await waitForEvent(harness.client.workflow.getHandle(id), 'run_finished');
  expect(finished.answer).toMatch(/after a restart/);
});
