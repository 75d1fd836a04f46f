/**
 * Records one history per kind of run with the current workflow code into test/histories/.
 * Run it (`npm run record-histories`) when adding a kind of run; never to paper over a replay
 * failure: a history that no longer replays means running conversations would break, which is
 * what patched() is for.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { DefaultLogger, NativeConnection, Runtime, bundleWorkflowCode } from '@temporalio/worker';
import OpenAI from 'openai';
import { AgentClient } from '../../src/client/agent-client';
import type { ConversationOptionsInput } from '../../src/shared/conversation-options';
import { builtinTools } from '../../src/tools/builtin-tools';
import { ToolRegistry } from '../../src/tools/registry';
import { createAgentWorker } from '../../src/worker/create-worker';
import { startDevServer } from '../../src/worker/dev-server';
import { freePort } from '../../src/worker/free-port';
import { PROJECT_TOOLS_DIR } from '../../src/worker/paths';
import { findOrBuildTemporalCli } from '../../src/worker/temporal-cli';
import type { ScriptStep } from './scripted-model';
import { startScriptedModelServer } from './scripted-model-server';

interface Scenario {
  name: string;
  options?: ConversationOptionsInput;
  messages: string[];
  model: ScriptStep[];
}

const SCENARIOS: Scenario[] = [
  {
    name: 'tool-fan-out',
    messages: ['Look around', 'Thanks'],
    model: [
      {
        text: 'Looking.',
        toolCalls: [
          { id: 'call_list', name: 'list_directory', arguments: {} },
          { id: 'call_read', name: 'read', arguments: { path: 'notes.txt' } },
          { id: 'call_unknown', name: 'teleport', arguments: {} },
          { id: 'call_bad_json', name: 'read', arguments: '{"path":' },
        ],
      },
      { text: 'There is one file, notes.txt.' },
      { text: 'You are welcome.' },
    ],
  },
  {
    name: 'max-tool-iterations',
    options: { maxToolIterations: 2 },
    messages: ['Loop'],
    model: [
      { toolCalls: [{ id: 'call_loop_1', name: 'list_directory', arguments: {} }] },
      { toolCalls: [{ id: 'call_loop_2', name: 'list_directory', arguments: {} }] },
    ],
  },
  {
    name: 'model-error',
    messages: ['Hello', 'Hello again'],
    model: [{ status: 401, error: 'invalid api key' }, { text: 'Hello.' }],
  },
];

async function main() {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const cliPath = await findOrBuildTemporalCli({
    env: process.env,
    toolsDir: PROJECT_TOOLS_DIR,
    log: console.log,
  });
  const server = await startDevServer({ cliPath, port: await freePort() });
  const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('../../src/workflows') });
  const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-record-'));
  // Bundled from source, never a stale dist/ bundle.
  const bundlePath = path.join(workspace, '..', `durable-agent-record-bundle-${process.pid}.js`);
  await writeFile(bundlePath, code);
  await writeFile(path.join(workspace, 'notes.txt'), 'remember the milk\n');
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  try {
    for (const scenario of SCENARIOS) {
      const model = await startScriptedModelServer(scenario.model);
      const nativeConnection = await NativeConnection.connect({ address: server.address });
      const taskQueue = `record-${scenario.name}`;
      const worker = await createAgentWorker({
        connection: nativeConnection,
        namespace: 'default',
        taskQueue,
        workflowBundlePath: bundlePath,
        activities: {
          openai: new OpenAI({ baseURL: model.baseUrl, apiKey: 'record', maxRetries: 0 }),
          defaultModel: 'scripted-model',
          tools: new ToolRegistry(builtinTools()),
          defaultWorkspace: workspace,
        },
      });
      await worker.runUntil(async () => {
        const agent = new AgentClient(client, taskQueue);
        const id = `history-${scenario.name}`;
        for (const text of scenario.messages) {
          const sent = await agent.send(id, text, { options: scenario.options });
          const follow = agent.follow(sent, 50);
          for (let next = await follow.next(); !next.done; next = await follow.next());
        }
        await agent.end(id);
        await client.workflow.getHandle(id).result();
        const history = await client.workflow.getHandle(id).fetchHistory();
        const file = path.join(__dirname, '..', 'histories', `${scenario.name}.json`);
        await writeFile(file, `${JSON.stringify(JSON.parse(historyToJSON(history)), null, 1)}\n`);
        console.log(`recorded ${file}`);
      });
      await nativeConnection.close();
      await model.close();
    }
  } finally {
    await connection.close();
    await server.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
