import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';

/**
 * The package as an embedder sees it: a script that imports only `durable-agent` and
 * `durable-agent/worker` (the `exports` map of the built package) runs a worker with a tool and a
 * hook of its own and asks it a question.
 */
let model: ScriptedModelServer | undefined;
afterAll(async () => model?.close());

test('an embedder builds a worker and a client from the package entry points alone', async () => {
  model = await startScriptedModelServer([
    { toolCalls: [{ id: 'call_weather', name: 'weather', arguments: { city: 'Lisbon' } }] },
    { text: 'Sunny.' },
  ]);
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [path.join(__dirname, '../support/embedder.mjs')],
    {
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
        OPENAI_BASE_URL: model.baseUrl,
        TASK_QUEUE: `embedder-${randomUUID()}`,
        WORKSPACE: await mkdtemp(path.join(os.tmpdir(), 'durable-agent-embedder-')),
        WORKFLOW_BUNDLE: process.env.TEST_WORKFLOW_BUNDLE!,
      },
      timeout: 60_000,
    },
  );
  expect(JSON.parse(stdout.trim().split('\n').pop()!)).toEqual({
    answer: 'Sunny.',
    result: 'sunny in Lisbon, api key [key]',
  });
});
