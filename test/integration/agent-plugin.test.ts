import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { AgentClient } from '../../src/client/agent-client';
import { DurableAgentPlugin } from '../../src/worker/agent-plugin';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';
import { killWorkerProcess, spawnWorkerProcess } from '../support/spawn-worker-process';
import type { triageTicket } from '../support/team/workflows';
import { waitFor } from '../support/test-worker';

// A team that already runs Temporal adds durable-agent to its own worker: its workflow runs an agent
// step (a tool of its own that waits for approval), then its own activity, on one worker.
const TEAM_WORKER = path.join(__dirname, '../support/team/worker.ts');
const children: ChildProcess[] = [];
let model: ScriptedModelServer | undefined;
let connection: Connection | undefined;
afterEach(async () => {
  for (const child of children.splice(0)) await killWorkerProcess(child);
  await model?.close();
  await connection?.close();
  model = undefined;
  connection = undefined;
});

async function startTeamWorker(env: Record<string, string>): Promise<ChildProcess> {
  const child = await spawnWorkerProcess(env, { script: TEAM_WORKER });
  children.push(child);
  return child;
}

const linesOf = (file: string) =>
  existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];

test("a team's workflow runs an agent step on its own worker; the worker SIGKILLed while the step waits for approval loses nothing", async () => {
  model = await startScriptedModelServer([
    { toolCalls: [{ id: 'call_label', name: 'label_ticket', arguments: { labels: ['bug', 'login'] } }] },
    { text: 'Labelled bug and login.' },
  ]);
  const markerDir = await mkdtemp(path.join(os.tmpdir(), 'team-worker-'));
  const env = {
    TEST_TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
    TASK_QUEUE: `team-${randomUUID()}`,
    OPENAI_BASE_URL: model.baseUrl,
    WORKSPACE: markerDir,
    MARKER_DIR: markerDir,
  };
  const first = await startTeamWorker(env);
  connection = await Connection.connect({ address: env.TEST_TEMPORAL_ADDRESS });
  const client = new Client({ connection, plugins: [new DurableAgentPlugin()] });
  const agent = new AgentClient(client, env.TASK_QUEUE);
  const conversationId = `triage-${randomUUID()}`;
  const workflow = await client.workflow.start<typeof triageTicket>('triageTicket', {
    taskQueue: env.TASK_QUEUE,
    workflowId: `ticket-${randomUUID()}`,
    args: ['Login fails on Safari', conversationId],
  });

  const pending = await waitFor(
    async () => (await agent.pendingApprovals(conversationId).catch(() => []))[0],
    'the agent step to wait for approval of its tool call',
  );
  expect(pending).toMatchObject({ toolName: 'label_ticket' });
  await killWorkerProcess(first);
  const second = await startTeamWorker(env);
  await agent.approve(conversationId, { toolCallId: pending.toolCallId, decision: 'allow_once', by: 'lead' });

  const result = await workflow.result();
  expect(result).toEqual({
    conversationId,
    outcome: 'answered',
    filed: 'Login fails on Safari: Labelled bug and login.',
  });
  // The tool ran once, on the worker that was alive when it was allowed; the team's activity once.
  expect(linesOf(path.join(markerDir, 'labels'))).toEqual([`${second.pid} bug,login`]);
  expect(linesOf(path.join(markerDir, 'filed'))).toHaveLength(1);
  // The model's second request carried the tool's result.
  expect(JSON.stringify(model.script.requests[1])).toContain('labelled bug, login');
}, 180_000);
