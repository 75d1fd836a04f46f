import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, rmdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { AgentClient } from '../../src/client/agent-client';
import { approveSignal } from '../../src/shared/conversation-api';
import { type Message, type ToolResultMessage, toolCallsOf } from '../../src/shared/messages';
import { subAgentId } from '../../src/shared/sub-agents';
import { agentDataConverter } from '../../src/worker/data-converter';
import { followToEnd } from '../support/ask';
import { CLI, assertCliBuilt } from '../support/cli-process';
import { inCi } from '../support/in-ci';
import type { ChatRequest, ScriptedReply } from '../support/scripted-model';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';
import { killWorkerProcess } from '../support/spawn-worker-process';
import { startTestCluster, stopTestCluster, whatClusterNeeds } from '../support/test-cluster';
import { waitFor } from '../support/test-worker';
import { eventsOf } from '../support/wait-for-event';

/**
 * Temporal as it runs in production, with a fleet: three `durable-agent worker` processes on one
 * task queue of a self-hosted cluster (its own, or the one `npm run test:cluster` runs), several
 * conversations at once, and one worker SIGKILLed while a sub-agent's command runs on it. Every
 * conversation finishes on the two left, every tool call has one result, and no command runs twice.
 */

const clusterAddress = process.env.TEST_CLUSTER_ADDRESS;
const missing = clusterAddress ? undefined : whatClusterNeeds('the fleet test');
// In CI a missing prerequisite fails the run; on a developer's machine the test is skipped, saying why.
if (missing && !inCi()) console.warn(`skipped: ${missing}`);
const whenAvailable = missing && !inCi() ? test.skip : test;

const log = (line: string) => console.log(`[fleet cluster] ${line}`);
let ownClusterDir: string | undefined;
let address: string | undefined;

beforeAll(async () => {
  assertCliBuilt();
  if (missing) {
    if (inCi()) throw new Error(missing);
    return;
  }
  if (clusterAddress) {
    address = clusterAddress;
    return;
  }
  // The Temporal server is built by the global setup, before any test starts.
  ownClusterDir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-fleet-cluster-'));
  address = await startTestCluster(ownClusterDir, log);
}, 900_000);

afterAll(async () => {
  if (!ownClusterDir) return;
  await stopTestCluster(ownClusterDir, log);
  await rm(ownClusterDir, { recursive: true, force: true });
}, 120_000);

interface FleetWorker {
  child: ChildProcess;
  pid: number;
  /** Settles once the worker serves its task queue; rejects if it exits first. */
  ready: Promise<void>;
  output(): string;
}

/** `durable-agent worker` in a process of its own. */
function startWorker(env: NodeJS.ProcessEnv, workspace: string): FleetWorker {
  const child = spawn(process.execPath, [CLI, 'worker', '--workspace', workspace], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8');
  const ready = new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (chunk: string) => {
      stderr += chunk;
      if (/worker on task queue/.test(stderr)) resolve();
    });
    child.once('exit', (code, signal) =>
      reject(new Error(`a worker exited before serving (${code ?? signal}):\n${stderr}`)),
    );
  });
  return { child, pid: child.pid!, ready, output: () => stderr };
}

/**
 * Removes the cgroups a worker SIGKILLed mid-command left behind (its exit handler never ran; the
 * next worker to run a command there would), once the command in them has ended.
 */
async function removeCgroupsOf(worker: FleetWorker): Promise<void> {
  const where = /commands run in a cgroup each under (.+?); /.exec(worker.output())?.[1];
  for (const dir of where?.split(' and ') ?? []) {
    if (path.basename(dir) !== `durable-agent-${worker.pid}`) continue;
    const runs = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const run of runs.filter((entry) => entry.isDirectory()))
      await rmdir(path.join(dir, run.name)).catch(() => undefined);
    await rmdir(dir).catch(() => undefined);
  }
}

/** Whether a process of the group -`group` is still there. */
function processGroupLives(group: number): boolean {
  try {
    process.kill(group, 0);
    return true;
  } catch {
    return false;
  }
}

const running = (worker: FleetWorker) => worker.child.exitCode === null && worker.child.signalCode === null;

/** Each tool call the model asked for in `transcript` with the results it got: exactly one each is right. */
function resultsPerCall(transcript: Message[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const message of transcript) {
    if (message.role === 'assistant') for (const call of toolCallsOf(message)) counts[call.id] ??= 0;
  }
  for (const message of transcript) {
    if (message.role === 'toolResult') counts[message.toolCallId] = (counts[message.toolCallId] ?? 0) + 1;
  }
  return counts;
}

function resultOf(transcript: Message[], toolCallId: string): ToolResultMessage {
  const result = transcript.find(
    (message): message is ToolResultMessage =>
      message.role === 'toolResult' && message.toolCallId === toolCallId,
  );
  if (!result) throw new Error(`no result for ${toolCallId}`);
  return result;
}

const textOfResult = (result: ToolResultMessage) =>
  result.content.map((block) => (block.type === 'text' ? block.text : '')).join('');

/** The side effect of every command: a line naming it (and its shell, to clean up after) in the shared workspace. */
const EFFECTS = 'effects.log';
const command = (marker: string, then = '') => `echo "${marker} $$" >> ${EFFECTS}${then}`;
/** While the workspace's `hold` file exists the command does not finish, however slowly the machine runs. */
const HOLD = 'hold';
const SLOW = `; echo working; while [ -e ${HOLD} ]; do sleep 0.1; done`;
const STEER_TEXT = 'Stop there, a smaller job will do';

/**
 * The model of every conversation, stateless: what it answers depends only on the conversation
 * (its first message, or a sub-agent's task) and on the results it has been given, so however the
 * requests of the conversations interleave, and whichever worker sends them, the script holds.
 */
function fleetModel(request: ChatRequest): ScriptedReply {
  const first = request.messages.find((message) => message.role === 'user')?.content ?? '';
  const results = new Map(
    request.messages
      .filter((message) => message.role === 'tool')
      .map((message) => [message.tool_call_id!, message.content ?? '']),
  );
  const lastUser = request.messages.filter((message) => message.role === 'user').at(-1)?.content;
  const exec = (id: string, commandLine: string): ScriptedReply => ({
    toolCalls: [{ id, name: 'exec', arguments: { command: commandLine } }],
  });
  const [tag] = first.split(':');
  switch (tag) {
    case 'Approval':
      return results.has('call_approval')
        ? { text: 'Approval: the command ran.' }
        : exec('call_approval', command('approval'));
    case 'Steer':
      return results.has('call_steer')
        ? { text: `Steer: heard "${lastUser}"` }
        : exec('call_steer', command('steer', SLOW));
    case 'Abort':
      return results.has('call_abort')
        ? { text: `Abort: then "${lastUser}"` }
        : exec('call_abort', command('abort', SLOW));
    case 'Delegate':
      return results.has('call_spawn')
        ? { text: `Delegate: the sub-agent says ${results.get('call_spawn')}` }
        : {
            toolCalls: [
              { id: 'call_spawn', name: 'sessions_spawn', arguments: { task: 'Sub-agent: a long job' } },
            ],
          };
    case 'Sub-agent':
      return results.has('call_sub')
        ? {
            text: /its worker may have died/.test(results.get('call_sub')!)
              ? 'its worker died'
              : 'it finished',
          }
        : exec('call_sub', command('sub-agent', SLOW));
    default:
      throw new Error(`the fleet model does not know this conversation: ${first}`);
  }
}

whenAvailable(
  'three workers on one task queue: conversations with an approval, a steer, an abort and a sub-agent all finish after one worker is SIGKILLed mid-run, each tool call with one result and each command run once',
  async () => {
    const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-fleet-ws-'));
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-fleet-data-'));
    const taskQueue = `fleet-${randomUUID()}`;
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TEMPORAL_ADDRESS: address,
      AGENT_TASK_QUEUE: taskQueue,
      AGENT_MODEL: 'scripted-model',
      DURABLE_AGENT_DATA_DIR: dataDir,
    };
    delete env.TEMPORAL_NAMESPACE;
    const effects = () =>
      readFile(path.join(workspace, EFFECTS), 'utf8').then(
        (text) => text.trim().split('\n').filter(Boolean),
        () => [] as string[],
      );
    const effectsOf = async (marker: string) =>
      (await effects()).filter((line) => line.split(' ')[0] === marker);

    let model: ScriptedModelServer | undefined;
    const workers: FleetWorker[] = [];
    const connections: Connection[] = [];
    await writeFile(path.join(workspace, HOLD), '');
    try {
      model = await startScriptedModelServer(Array.from({ length: 40 }, () => fleetModel));
      env.OPENAI_BASE_URL = model.baseUrl;
      workers.push(startWorker(env, workspace), startWorker(env, workspace), startWorker(env, workspace));
      await Promise.all(workers.map((worker) => worker.ready));

      const dataConverter = agentDataConverter(env);
      const connection = await Connection.connect({ address: address! });
      connections.push(connection);
      const client = new Client({ connection, dataConverter });
      const agent = new AgentClient(client, taskQueue);
      const suffix = randomUUID().slice(0, 8);
      const ids = {
        approval: `fleet-approval-${suffix}`,
        steer: `fleet-steer-${suffix}`,
        abort: `fleet-abort-${suffix}`,
        delegate: `fleet-delegate-${suffix}`,
      };
      const sub = subAgentId(ids.delegate, 'call_spawn');
      const auto = { options: { approval: { mode: 'auto' as const } } };

      // Four conversations at once: exec asks for approval by default; the others run it at once.
      const [approvalSent, steerSent, abortSent, delegateSent] = await Promise.all([
        agent.send(ids.approval, 'Approval: record a deploy'),
        agent.send(ids.steer, 'Steer: a long job', auto),
        agent.send(ids.abort, 'Abort: a long job', auto),
        agent.send(ids.delegate, 'Delegate: a long job', auto),
      ]);
      await waitFor(async () => {
        const pending = await agent.pendingApprovals(ids.approval);
        const started = await Promise.all(['steer', 'abort', 'sub-agent'].map(effectsOf));
        return pending.some((approval) => approval.toolCallId === 'call_approval') &&
          started.every((lines) => lines.length > 0)
          ? true
          : undefined;
      }, 'the approval to be asked for and three commands to run');
      expect(await effectsOf('approval')).toEqual([]);

      // Steered and aborted mid-command, while the sub-agent's command goes on.
      const steered = await agent.steer(ids.steer, STEER_TEXT);
      expect(steered.interrupting).toBe(true);
      expect((await followToEnd(agent, steerSent)).finished).toMatchObject({
        outcome: 'answered',
        answer: `Steer: heard "${STEER_TEXT}"`,
      });
      expect(await agent.abort(ids.abort, { reason: 'not needed', by: 'ops' })).toEqual({ run: 1 });
      expect((await followToEnd(agent, abortSent)).finished).toMatchObject({ outcome: 'aborted' });

      // SIGKILL the worker running the sub-agent's command: mid-run for it and its parent, and for
      // the conversation waiting for its approval (whichever worker has its workflow cached).
      const identity = await waitFor(async () => {
        const description = await client.workflow.getHandle(sub).describe();
        return (
          description.raw.pendingActivities?.find(
            (activity) => activity.activityType?.name === 'runTool' && activity.lastWorkerIdentity,
          )?.lastWorkerIdentity ?? undefined
        );
      }, 'the sub-agent command on a worker');
      // `<pid>@<host>`, then the worker's push endpoint.
      const victim = workers.find((worker) => identity?.split(' ')[0] === `${worker.pid}@${os.hostname()}`);
      expect(victim).toBeDefined();
      await killWorkerProcess(victim!.child);
      expect(victim!.child.signalCode).toBe('SIGKILL');

      // The approval, decided by a plain signal from another client, as a service with only Temporal would.
      const approverConnection = await Connection.connect({ address: address! });
      connections.push(approverConnection);
      await new Client({ connection: approverConnection, dataConverter }).workflow
        .getHandle(ids.approval)
        .signal(approveSignal, { toolCallId: 'call_approval', decision: 'allow_once', by: 'ops' });
      const abortAgain = await agent.send(ids.abort, 'carry on');

      const [approved, carriedOn, delegated] = await Promise.all([
        followToEnd(agent, approvalSent),
        followToEnd(agent, abortAgain),
        followToEnd(agent, delegateSent),
      ]);
      expect(approved.finished).toMatchObject({ outcome: 'answered', answer: 'Approval: the command ran.' });
      expect(carriedOn.finished).toMatchObject({
        run: 2,
        outcome: 'answered',
        answer: 'Abort: then "carry on"',
      });
      expect(delegated.finished).toMatchObject({
        outcome: 'answered',
        answer: 'Delegate: the sub-agent says its worker died',
      });
      expect(
        (await eventsOf(client.workflow.getHandle(ids.approval))).find((e) => e.type === 'approval_decided'),
      ).toMatchObject({ by: 'ops', decision: 'allow_once' });

      // Every tool call has exactly one result, and each says what happened to it.
      const transcripts = Object.fromEntries(
        await Promise.all(
          [...Object.values(ids), sub].map(async (id) => [id, (await agent.state(id)).transcript] as const),
        ),
      );
      expect(
        Object.fromEntries(Object.entries(transcripts).map(([id, t]) => [id, resultsPerCall(t)])),
      ).toEqual({
        [ids.approval]: { call_approval: 1 },
        [ids.steer]: { call_steer: 1 },
        [ids.abort]: { call_abort: 1 },
        [ids.delegate]: { call_spawn: 1 },
        [sub]: { call_sub: 1 },
      });
      expect(resultOf(transcripts[ids.approval]!, 'call_approval')).toMatchObject({ isError: false });
      const steerResult = resultOf(transcripts[ids.steer]!, 'call_steer');
      expect(steerResult).toMatchObject({ aborted: true });
      expect(textOfResult(steerResult)).toBe(
        'interrupted and killed. Output so far:\nworking\n[interrupted before it finished: the output above is partial]',
      );
      expect(resultOf(transcripts[ids.abort]!, 'call_abort')).toMatchObject({ aborted: true });
      expect(textOfResult(resultOf(transcripts[ids.delegate]!, 'call_spawn'))).toBe('its worker died');
      const subResult = resultOf(transcripts[sub]!, 'call_sub');
      expect(subResult).toMatchObject({ isError: true });
      expect(textOfResult(subResult)).toMatch(
        /its worker may have died\); it has side effects, so it was not run again/,
      );

      // No command ran twice: one line each, and Temporal started each tool activity once.
      expect((await effects()).map((line) => line.split(' ')[0]).sort()).toEqual([
        'abort',
        'approval',
        'steer',
        'sub-agent',
      ]);
      for (const id of [...Object.values(ids), sub]) {
        const events = (await client.workflow.getHandle(id).fetchHistory()).events ?? [];
        const toolTasks = new Set(
          events
            .filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'runTool')
            .map((event) => String(event.eventId)),
        );
        const attempts = events
          .filter((event) =>
            toolTasks.has(String(event.activityTaskStartedEventAttributes?.scheduledEventId)),
          )
          .map((event) => event.activityTaskStartedEventAttributes!.attempt);
        expect({ id, attempts }).toEqual({ id, attempts: id === ids.delegate ? [] : [1] });
        // The one on the killed worker timed out (its heartbeats stopped) and was not tried again.
        const timedOut = events.filter((event) => event.activityTaskTimedOutEventAttributes).length;
        expect({ id, timedOut }).toEqual({ id, timedOut: id === sub ? 1 : 0 });
      }

      expect(model.script.exhausted).toBe(false);

      // The other two workers served all of it, still run, and stop cleanly.
      const survivors = workers.filter(running);
      expect(survivors).toHaveLength(2);
      const stopped = survivors.map(
        (worker) => new Promise((resolve) => worker.child.once('exit', (code) => resolve(code))),
      );
      for (const worker of survivors) worker.child.kill('SIGTERM');
      // 130: stopped by a signal, after its cleanups (src/cli/cli.ts).
      expect(await Promise.all(stopped)).toEqual([130, 130]);
    } catch (error) {
      for (const worker of workers) console.log(`worker ${worker.pid}:\n${worker.output()}`);
      throw error;
    } finally {
      await Promise.all(workers.map((worker) => killWorkerProcess(worker.child)));
      // The command the killed worker ran outlived it: without the hold file it ends by itself.
      await rm(path.join(workspace, HOLD), { force: true });
      const groups = (await effects()).map((line) => -Number(line.split(' ')[1]));
      await waitFor(
        async () => (groups.some(processGroupLives) ? undefined : true),
        'the commands to end',
        10_000,
      ).catch(() => groups.filter(processGroupLives).forEach((group) => process.kill(group, 'SIGKILL')));
      for (const worker of workers) await removeCgroupsOf(worker);
      for (const connection of connections) await connection.close();
      await model?.close();
      await rm(workspace, { recursive: true, force: true });
      await rm(dataDir, { recursive: true, force: true });
    }
  },
  120_000,
);
