import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { AgentClient } from '../../src/client/agent-client';
import { buildTimeline } from '../../src/history/build-timeline';
import { DurableAgentPlugin } from '../../src/worker/agent-plugin';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';

const ROOT = path.resolve(__dirname, '../..');
let model: ScriptedModelServer | undefined;
let example: ChildProcess | undefined;
afterEach(async () => {
  // The example runs the gateway as a child of its own: the whole process group goes.
  try {
    if (example?.pid) process.kill(-example.pid, 'SIGKILL');
  } catch {
    // Every process of the group has exited already.
  }
  example = undefined;
  await model?.close();
});

/** Runs the example in a process group of its own; resolves with its stdout once it exits 0. */
function runInGroup(env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'examples/webhook-approval/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  example = child;
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`example still running after 90 s:\n${stderr}`)), 90_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(stdout);
      else reject(new Error(`example exited ${code}:\n${stdout}\n${stderr}`));
    });
  });
}

test('examples/webhook-approval: the approver service allows the staging deploy through the gateway', async () => {
  model = await startScriptedModelServer([
    {
      toolCalls: [{ id: 'call_deploy', name: 'deploy', arguments: { build: '42', environment: 'staging' } }],
    },
    { text: 'Build 42 is live on staging.' },
  ]);
  const env = {
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
    OPENAI_BASE_URL: model.baseUrl,
    TASK_QUEUE: `example-webhook-approval-${randomUUID()}`,
  };
  const lines = (await runInGroup(env)).trim().split('\n');
  expect(lines.at(-1)).toBe('answered: Build 42 is live on staging.');
  expect(lines).toContain('approver: allow_once deploy {"build":"42","environment":"staging"} (gateway 200)');
  // The tool ran once it was allowed, and the decision is the gateway token's identity.
  expect(JSON.stringify(model.script.requests[1]!.messages)).toContain('build 42 is live on staging');
  expect(lines).toContain('deploy: allow_once by deploy-approver');
  // What Temporal recorded: the decision came as an update, as the gateway token's identity.
  const conversationId = /^conversation (\S+)$/.exec(lines[0]!)![1]!;
  const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
  try {
    const client = new Client({ connection, plugins: [new DurableAgentPlugin()] });
    const { executions, converter } = await new AgentClient(client, env.TASK_QUEUE).history(conversationId);
    const approvals = buildTimeline(conversationId, executions, converter).items.filter(
      (item) => item.kind === 'approval',
    );
    expect(approvals).toEqual([
      expect.objectContaining({
        toolCallId: 'call_deploy',
        decision: 'allow_once',
        by: 'deploy-approver',
        reason: 'deploys to staging are allowed',
        via: 'update',
      }),
    ]);
  } finally {
    await connection.close();
  }
});
