import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import OpenAI from 'openai';
import { AgentClient } from '../../src/client/agent-client';
import { connectionSettingsFromEnv } from '../../src/client/connection-settings-from-env';
import { ToolRegistry } from '../../src/tools/registry';
import { connectClient, connectWorker } from '../../src/worker/connect';
import { createAgentWorker } from '../../src/worker/create-worker';
import { agentDataConverter } from '../../src/worker/data-converter';
import { startDevServer } from '../../src/temporal-server/dev-server';
import { isListening } from '../../src/platform/free-port';
import { ensureSearchAttributes } from '../../src/temporal-server/search-attribute-registration';
import { connectWhenServing } from '../../src/worker/server-readiness';
import { ask } from '../support/ask';
import { assertCliBuilt, runCli, startCli } from '../support/cli-process';
import { startScriptedModelServer } from '../support/scripted-model-server';
import { quietRuntime } from '../support/test-worker';
import { unclaimedPort } from '../support/unclaimed-port';

beforeAll(assertCliBuilt);

/** What `durable-agent server` and the commands beside it are given: their own data, ports and model. */
async function embeddedEnv(modelUrl: string): Promise<{ env: NodeJS.ProcessEnv; port: number }> {
  const port = await unclaimedPort();
  const uiPort = await unclaimedPort([port]);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DURABLE_AGENT_DATA_DIR: await mkdtemp(path.join(os.tmpdir(), 'durable-agent-ready-')),
    DURABLE_AGENT_SERVER_PORT: String(port),
    DURABLE_AGENT_UI_PORT: String(uiPort),
    DURABLE_AGENT_CODEC_PORT: String(await unclaimedPort([port, uiPort])),
    OPENAI_BASE_URL: modelUrl,
    AGENT_MODEL: 'scripted-model',
  };
  delete env.TEMPORAL_ADDRESS;
  return { env, port };
}

async function portOpens(port: number): Promise<void> {
  while (!(await isListening('127.0.0.1', port))) await new Promise((resolve) => setTimeout(resolve, 10));
}

const TRIES = 20;

test(`a script that runs \`durable-agent run\` the moment \`durable-agent server\` opens its port succeeds, ${TRIES} times in ${TRIES}`, async () => {
  const model = await startScriptedModelServer(
    Array.from({ length: TRIES }, (_, index) => ({ text: `hello ${index}` })),
  );
  const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-ready-ws-'));
  // One data directory, as on a person's machine: the first start prepares its new data file.
  const { env, port } = await embeddedEnv(model.baseUrl);
  const failures: string[] = [];
  try {
    for (let index = 0; index < TRIES; index++) {
      const server = startCli(['server'], env);
      try {
        await Promise.race([
          portOpens(port),
          server.done.then((exit) => Promise.reject(new Error(`the server exited: ${exit.stderr}`))),
        ]);
        const ran = await runCli(['run', '--workspace', workspace, `Say hello ${index}`], env);
        if (ran.code !== 0 || ran.stdout !== `hello ${index}\n`) {
          failures.push(
            `try ${index}: exit ${ran.code}, stdout ${JSON.stringify(ran.stdout)}\n${ran.stderr}`,
          );
        }
      } finally {
        server.kill('SIGTERM');
        await server.done;
      }
    }
  } finally {
    await model.close();
  }
  expect(failures).toEqual([]);
}, 900_000);

test(`a worker and a client that connect the moment the embedded server's port opens, as \`run\` does, are served, ${TRIES} times in ${TRIES}`, async () => {
  // \`run\` in a process of its own needs a second or two before its first call, which can hide a
  // server that opens its port early; the same steps in this process reach the server at once.
  quietRuntime();
  const settings = connectionSettingsFromEnv({});
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-ready-inproc-'));
  const failures: string[] = [];
  for (let index = 0; index < TRIES; index++) {
    // A model of its own each try: a try that fails before its model call leaves the next its answer.
    const model = await startScriptedModelServer([{ text: `at once ${index}` }]);
    const port = await unclaimedPort();
    const starting = startDevServer({
      port,
      dbFile: path.join(dataDir, `try-${index}.db`),
      log: () => undefined,
    });
    try {
      await Promise.race([portOpens(port), starting]);
      const answer = await askAtOnce(settings, `127.0.0.1:${port}`, model.baseUrl, `ready-${index}`);
      if (answer !== `at once ${index}`) failures.push(`try ${index}: answered ${JSON.stringify(answer)}`);
    } catch (error) {
      failures.push(`try ${index}: ${(error as Error).message}`);
    } finally {
      await (await starting).stop();
      await model.close();
    }
  }
  expect(failures).toEqual([]);
}, 900_000);

/** What \`run\` does once it has a server: connect a worker and a client, start a conversation, follow it. */
async function askAtOnce(
  settings: ReturnType<typeof connectionSettingsFromEnv>,
  address: string,
  modelUrl: string,
  conversationId: string,
): Promise<string> {
  const log = () => undefined;
  const workerConnection = await connectWorker(settings, address, log);
  const searchAttributes = await ensureSearchAttributes(workerConnection, settings.namespace, log);
  const taskQueue = `ready-${randomUUID()}`;
  const worker = await createAgentWorker({
    connection: workerConnection,
    namespace: settings.namespace,
    taskQueue,
    workflowBundlePath: process.env.TEST_WORKFLOW_BUNDLE,
    shutdownGraceTimeMs: 1_000,
    activities: {
      openai: new OpenAI({ baseURL: modelUrl, apiKey: 'test', maxRetries: 0 }),
      defaultModel: 'scripted-model',
      tools: new ToolRegistry([]),
      defaultWorkspace: os.tmpdir(),
      searchAttributes,
    },
  });
  const running = worker.run();
  const connection = await connectClient(settings, address, log);
  try {
    const agent = new AgentClient(new Client({ connection, dataConverter: agentDataConverter() }), taskQueue);
    const { finished } = await ask(agent, conversationId, 'Are you there?');
    return finished.answer;
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
    await workerConnection.close();
  }
}

test('a worker started before the server answers waits for it, says so, and then serves', async () => {
  const model = await startScriptedModelServer([{ text: 'served after the wait' }]);
  const { env, port } = await embeddedEnv(model.baseUrl);
  const workerEnv = { ...env, TEMPORAL_ADDRESS: `127.0.0.1:${port}` };
  const worker = startCli(['worker'], workerEnv);
  let server: ReturnType<typeof startCli> | undefined;
  try {
    await worker.stderrMatching(
      /The Temporal server at 127\.0\.0\.1:\d+ does not answer yet \(still starting\?\): waiting up to 60 s\./,
    );
    server = startCli(['server'], env);
    await worker.stderrMatching(/worker on task queue/);
    const sent = await runCli(['send', 'ready-worker-conv', 'Are you there?'], workerEnv);
    expect(sent).toMatchObject({ code: 0, stdout: 'served after the wait\n' });
  } finally {
    worker.kill('SIGTERM');
    await worker.done;
    server?.kill('SIGTERM');
    await server?.done;
    await model.close();
  }
}, 180_000);

describe('connectWhenServing', () => {
  const address = process.env.TEST_TEMPORAL_ADDRESS!;

  test('waits while the namespace is not registered yet, then connects', async () => {
    const namespace = `ready-${randomUUID()}`;
    const said: string[] = [];
    const connecting = connectWhenServing(() => Connection.connect({ address }), {
      address,
      namespace,
      timeoutMs: 60_000,
      log: (line) => said.push(line),
    });
    const admin = await Connection.connect({ address });
    try {
      await waitUntil(() => said.length > 0);
      await admin.workflowService.registerNamespace({
        namespace,
        workflowExecutionRetentionPeriod: msToTs('1 day'),
      });
      const connection = await connecting;
      await connection.close();
      expect(said).toEqual([
        `The Temporal server at ${address} does not serve namespace '${namespace}' yet (still starting?): waiting up to 60 s.`,
      ]);
    } finally {
      await admin.close();
    }
  });

  test('gives up after its time with what to do', async () => {
    const namespace = `never-${randomUUID()}`;
    await expect(
      connectWhenServing(() => Connection.connect({ address }), {
        address,
        namespace,
        timeoutMs: 1_000,
        log: () => undefined,
      }),
    ).rejects.toThrow(
      new RegExp(
        `the Temporal server at ${address} does not serve namespace '${namespace}' after 1 s .*DURABLE_AGENT_SERVER_WAIT_MS`,
      ),
    );
  });

  test('a server that refuses for another reason fails at once', async () => {
    await expect(
      connectWhenServing(
        async () => {
          throw new Error('invalid peer certificate: UnknownIssuer');
        },
        { address, namespace: 'default', timeoutMs: 60_000, log: () => undefined },
      ),
    ).rejects.toThrow('invalid peer certificate');
  });
});

async function waitUntil(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 20));
}
