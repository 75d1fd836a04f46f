import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { AgentClient } from '../../src/client/agent-client';
import { WorkerDeployments } from '../../src/client/worker-deployments';
import { pendingApprovalsQuery } from '../../src/shared/conversation-api';
import { bundleAgentWorkflows } from '../../src/worker/workflow-bundle';
import { ask, followToEnd } from '../support/ask';
import { assertCliBuilt, runCli } from '../support/cli-process';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';
import { killWorkerProcess, spawnWorkerProcess } from '../support/spawn-worker-process';
import { waitFor } from '../support/test-worker';

/**
 * A deploy with an incompatible workflow change, as an operator makes it: build A serves a
 * conversation that waits for an approval; build B, whose conversation starts a timer A's never
 * did (test/support/incompatible-conversation.ts), becomes current; A keeps running until nothing is
 * pinned to it (drained), then stops. The approval is honoured on A, nothing fails
 * nondeterministically, and the conversation's next execution runs on B.
 */

const { RoutingConfigUpdateState, VersioningBehavior } = temporal.api.enums.v1;

let model: ScriptedModelServer | undefined;
let connection: Connection;
let client: Client;
let deployments: WorkerDeployments;
let workDir: string;
const workers: ChildProcess[] = [];

beforeAll(async () => {
  try {
    // Core logs every failed workflow task; the replay at the end provokes one on purpose.
    Runtime.install({
      logger: new DefaultLogger('ERROR'),
      telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } },
    });
  } catch {
    // Installed already by another test file in this Jest worker.
  }
  connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  client = new Client({ connection });
  deployments = new WorkerDeployments(connection.workflowService, 'default');
  workDir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-deploy-'));
});

afterAll(async () => {
  for (const worker of workers) await killWorkerProcess(worker);
  await model?.close();
  await connection.close();
  await rm(workDir, { recursive: true, force: true });
});

/** Retries `change` while Temporal does not know the version yet (it learns it from the worker's polls). */
async function whenKnown(change: () => Promise<unknown>, what: string): Promise<void> {
  let lastError: unknown;
  await waitFor(
    () =>
      change().then(
        () => true,
        (error: unknown) => {
          lastError = error;
          return undefined;
        },
      ),
    what,
  ).catch((error: Error) => {
    throw new Error(`${error.message}: ${(lastError as Error | undefined)?.message}`);
  });
}

function versioningOf(description: Awaited<ReturnType<WorkflowHandle['describe']>>) {
  const info = description.raw.workflowExecutionInfo?.versioningInfo;
  return {
    buildId: info?.deploymentVersion?.buildId,
    pinned: info?.behavior === VersioningBehavior.VERSIONING_BEHAVIOR_PINNED,
  };
}

/** Workflow tasks that failed in an execution's history: none, when no build met another's history. */
async function failedWorkflowTasks(handle: WorkflowHandle): Promise<string[]> {
  const history = await handle.fetchHistory();
  return (history.events ?? []).flatMap((event) => {
    const failed = event.workflowTaskFailedEventAttributes;
    return failed ? [`${failed.cause}: ${failed.failure?.message}`] : [];
  });
}

test('a conversation waiting for an approval on build A is answered on A, then moves to build B when A drains', async () => {
  model = await startScriptedModelServer([
    { text: 'Counting.', toolCalls: [{ id: 'call_count', name: 'slow_count', arguments: { n: 1 } }] },
    { text: 'Counted on the build that started it.' },
    { text: 'Answered on the new build.' },
  ]);
  const deploymentName = `agents-${randomUUID().slice(0, 8)}`;
  const taskQueue = `deploy-${randomUUID()}`;
  const incompatibleBundle = path.join(workDir, 'build-b.js');
  await writeFile(
    incompatibleBundle,
    await bundleAgentWorkflows({ workflowsPath: require.resolve('../support/incompatible-conversation') }),
  );
  const common = {
    TASK_QUEUE: taskQueue,
    OPENAI_BASE_URL: model.baseUrl,
    WORKSPACE: workDir,
    MARKER_DIR: workDir,
    AGENT_DEPLOYMENT_NAME: deploymentName,
  };

  const workerA = await spawnWorkerProcess({
    ...common,
    AGENT_BUILD_ID: 'build-a',
    TEST_WORKFLOW_BUNDLE: process.env.TEST_WORKFLOW_BUNDLE!,
  });
  workers.push(workerA);
  await whenKnown(() => deployments.setCurrent(deploymentName, 'build-a'), 'build A to become current');

  const agent = new AgentClient(client, taskQueue);
  const id = `conv-${randomUUID()}`;
  const sent = await agent.send(id, 'Count to one, with my approval.', {
    options: { approval: { tools: { slow_count: 'always' } } },
  });
  const handle = client.workflow.getHandle(id);
  await waitFor(
    async () =>
      (await handle.query(pendingApprovalsQuery)).find((pending) => pending.toolCallId === 'call_count'),
    'the approval to be pending',
  );
  const onA = await handle.describe();
  expect(versioningOf(onA)).toEqual({ buildId: 'build-a', pinned: true });
  await waitFor(
    async () => ((await deployments.pinnedOpen(deploymentName, 'build-a')) === 1 ? true : undefined),
    'visibility to show the conversation pinned to build A',
  );

  const workerB = await spawnWorkerProcess({
    ...common,
    AGENT_BUILD_ID: 'build-b',
    TEST_WORKFLOW_BUNDLE: incompatibleBundle,
  });
  workers.push(workerB);
  let change: Awaited<ReturnType<WorkerDeployments['setCurrent']>> | undefined;
  await whenKnown(async () => {
    change = await deployments.setCurrent(deploymentName, 'build-b');
  }, 'build B to become current');
  // The conversation waiting on A is told; its next workflow task will say the target changed.
  expect(change).toMatchObject({ previous: 'build-a', pinned: 1 });
  // The server's own workers carry the new routing to the task queues: on a loaded machine that
  // can take longer than setCurrent waits, which it then reports.
  if (!change!.routed) expect(await deployments.routingReached(deploymentName, 180_000)).toBe(true);
  const routed = await deployments.describe(deploymentName);
  expect(routed.current).toBe('build-b');
  expect(routed.versions.find((version) => version.buildId === 'build-a')).toMatchObject({
    status: 'draining',
    pinnedOpen: 1,
  });

  // The approval reaches the execution pinned to A, which runs the tool and answers.
  await agent.approve(id, { toolCallId: 'call_count', decision: 'allow_once', by: 'operator' });
  expect((await followToEnd(agent, sent)).finished).toMatchObject({
    outcome: 'answered',
    answer: 'Counted on the build that started it.',
  });

  // Between runs the conversation continues as new onto B; A then has nothing pinned to it.
  const onB = await waitFor(async () => {
    const description = await handle.describe();
    return description.runId !== onA.runId && versioningOf(description).buildId === 'build-b'
      ? description
      : undefined;
  }, 'the next execution to run on build B');
  expect(versioningOf(onB)).toEqual({ buildId: 'build-b', pinned: true });
  await waitFor(
    async () => ((await deployments.pinnedOpen(deploymentName, 'build-a')) === 0 ? true : undefined),
    'build A to drain',
  );
  await killWorkerProcess(workerA);

  expect((await ask(agent, id, 'And now?')).finished).toMatchObject({
    outcome: 'answered',
    answer: 'Answered on the new build.',
  });
  const nextExecution = client.workflow.getHandle(id, onB.runId);
  // B's code ran the next execution: its history has B's timer.
  const nextHistory = await nextExecution.fetchHistory();
  expect((nextHistory.events ?? []).some((event) => event.timerStartedEventAttributes)).toBe(true);
  const firstExecution = client.workflow.getHandle(id, onA.runId);
  expect(await failedWorkflowTasks(firstExecution)).toEqual([]);
  expect(await failedWorkflowTasks(nextExecution)).toEqual([]);
  // What pinning spared it: the execution A began does not replay on B.
  await expect(
    Worker.runReplayHistory(
      { workflowBundle: { codePath: incompatibleBundle } },
      await firstExecution.fetchHistory(),
      id,
    ),
  ).rejects.toBeInstanceOf(DeterminismViolationError);
}, 420_000);

test("a conversation idle in the cache of build A's worker runs its next message on build B once B is current", async () => {
  const previous = model;
  model = await startScriptedModelServer([
    { text: 'Answered on build A.' },
    { text: 'Answered on build B.' },
  ]);
  await previous?.close();
  const deploymentName = `agents-${randomUUID().slice(0, 8)}`;
  const common = {
    TASK_QUEUE: `deploy-idle-${randomUUID()}`,
    OPENAI_BASE_URL: model.baseUrl,
    WORKSPACE: workDir,
    MARKER_DIR: workDir,
    AGENT_DEPLOYMENT_NAME: deploymentName,
    // Both builds run the same code: what moves the conversation is the routing, not a change.
    TEST_WORKFLOW_BUNDLE: process.env.TEST_WORKFLOW_BUNDLE!,
  };
  workers.push(await spawnWorkerProcess({ ...common, AGENT_BUILD_ID: 'build-a' }));
  await whenKnown(() => deployments.setCurrent(deploymentName, 'build-a'), 'build A to become current');
  const agent = new AgentClient(client, common.TASK_QUEUE);
  const id = `conv-${randomUUID()}`;
  expect((await ask(agent, id, 'First question.')).finished.answer).toBe('Answered on build A.');
  const handle = client.workflow.getHandle(id);
  const onA = await handle.describe();
  expect(versioningOf(onA)).toEqual({ buildId: 'build-a', pinned: true });
  await waitFor(
    async () => ((await deployments.pinnedOpen(deploymentName, 'build-a')) === 1 ? true : undefined),
    'visibility to show the conversation pinned to build A',
  );

  // The conversation waits in the cache of A's worker, whose sticky queue its next task goes to:
  // the server tells it there that the target changed, with nothing done by set-current.
  workers.push(await spawnWorkerProcess({ ...common, AGENT_BUILD_ID: 'build-b' }));
  let change: Awaited<ReturnType<WorkerDeployments['setCurrent']>> | undefined;
  await whenKnown(async () => {
    change = await deployments.setCurrent(deploymentName, 'build-b');
  }, 'build B to become current');
  expect(change).toMatchObject({ previous: 'build-a', pinned: 1 });
  // set-current waits 30 s at most for the routing to reach the task queues, which a loaded server
  // can take longer than.
  await waitFor(async () => {
    const { workerDeploymentInfo } = await connection.workflowService.describeWorkerDeployment({
      namespace: 'default',
      deploymentName,
    });
    return workerDeploymentInfo?.routingConfigUpdateState ===
      RoutingConfigUpdateState.ROUTING_CONFIG_UPDATE_STATE_COMPLETED
      ? true
      : undefined;
  }, 'the routing to reach the task queues');

  // The task its next message makes says the target changed: it continues as new onto B before the
  // run, which B's worker runs.
  expect((await ask(agent, id, 'Second question.')).finished.answer).toBe('Answered on build B.');
  const now = await handle.describe();
  expect(now.runId).not.toBe(onA.runId);
  expect(versioningOf(now)).toEqual({ buildId: 'build-b', pinned: true });
  const firstExecution = await client.workflow.getHandle(id, onA.runId).fetchHistory();
  const modelCalls = (firstExecution.events ?? []).filter(
    (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel',
  );
  expect(modelCalls).toHaveLength(1);
  expect(taskThatToldTheTargetChanged(firstExecution.events ?? [])).toMatchObject({
    kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_STICKY,
  });
}, 240_000);

/** The task queue of the first workflow task whose start said the target build changed. */
function taskThatToldTheTargetChanged(events: temporal.api.history.v1.IHistoryEvent[]) {
  const started = events.find(
    (event) => event.workflowTaskStartedEventAttributes?.targetWorkerDeploymentVersionChanged,
  );
  const scheduledId = started?.workflowTaskStartedEventAttributes?.scheduledEventId;
  const scheduled = events.find((event) => String(event.eventId) === String(scheduledId));
  return scheduled?.workflowTaskScheduledEventAttributes?.taskQueue ?? undefined;
}

test('the deploy commands route new conversations: set-current, ramp, list, describe, rollback', async () => {
  assertCliBuilt();
  model ??= await startScriptedModelServer([]);
  const deploymentName = `agents-${randomUUID().slice(0, 8)}`;
  const common = {
    TASK_QUEUE: `deploy-cli-${randomUUID()}`,
    OPENAI_BASE_URL: model.baseUrl,
    WORKSPACE: workDir,
    MARKER_DIR: workDir,
    AGENT_DEPLOYMENT_NAME: deploymentName,
    TEST_WORKFLOW_BUNDLE: process.env.TEST_WORKFLOW_BUNDLE!,
  };
  for (const buildId of ['build-a', 'build-b']) {
    workers.push(await spawnWorkerProcess({ ...common, AGENT_BUILD_ID: buildId }));
  }
  const env = { ...process.env, TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS };
  const deploy = async (...args: string[]) => {
    const run = await runCli(['deploy', ...args], env);
    if (run.code !== 0) throw new Error(`deploy ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
    return run;
  };

  await whenKnown(() => deploy('set-current', deploymentName, 'build-a'), 'build A to become current');
  await whenKnown(() => deploy('set-current', deploymentName, 'build-b'), 'build B to become current');
  const ramped = await deploy('ramp', deploymentName, 'build-a', '25');
  expect(ramped.stderr).toContain(`${deploymentName}: 25% of new conversations`);
  const listed = (await deploy('list', '--json')).stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { name: string });
  expect(listed.find((listing) => listing.name === deploymentName)).toEqual({
    name: deploymentName,
    current: 'build-b',
    ramping: { buildId: 'build-a', percent: 25 },
  });

  const rolledBack = await deploy('rollback', deploymentName, '--json');
  // `routed` may still be false here on a cluster: the ramp's routing can still be on its way.
  expect(JSON.parse(rolledBack.stdout)).toMatchObject({
    deployment: deploymentName,
    current: 'build-a',
    previous: 'build-b',
    pinned: 0,
  });
  const described = await deploy('describe', deploymentName);
  expect(described.stdout.split('\n')[0]).toBe(`${deploymentName}  current build-a`);
  expect(described.stdout).toMatch(/\n {2}build-b {2}(draining|drained|inactive)/);

  const unknown = await runCli(['deploy', 'describe', `nobody-${randomUUID().slice(0, 8)}`], env);
  expect(unknown.code).toBe(1);
  expect(unknown.stderr).toContain('not found');
  const misused = await runCli(['deploy', 'ramp', deploymentName, 'build-a', '150'], env);
  expect(misused.code).toBe(2);
  expect(misused.stderr).toContain('PERCENT is a number from 0 to 100, not "150"');
}, 120_000);
