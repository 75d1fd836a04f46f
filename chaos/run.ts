/**
 * `npm run chaos`: conversations run while workers are SIGKILLed at random moments, the Temporal
 * server is SIGKILLed and started again on its data file, and the model endpoint misbehaves; then
 * every conversation is checked: answered, each tool call with exactly one result, the side effect
 * of the non-idempotent tool never done twice, a call cut off reported as such. Conversations are of
 * four kinds in turn (chaos/trials.ts): plain tool calls, an approval a person gives a moment later,
 * a sub-agent, and three runs that continue as new. Results go to chaos/results/chaos.json and
 * chaos/results/summary.md (RELIABILITY.md holds one run). Arguments: `--trials N` (default 50),
 * `--workers N` (3), `--fault-rate R` (model faults per request, 0.25), `--server-kills N` (2),
 * `--seed N`, `--results DIR` (default chaos/results).
 *
 * `--cluster`: on a Temporal cluster instead of the dev server (`durable-agent cluster`:
 * PostgreSQL and Temporal's four services, each a process of its own, in a directory of its own,
 * `--cluster-dir DIR`, by default a new one in the temp directory). Spread over the trials,
 * `--cluster-faults N` times (default 8, at least one of each kind while N allows) the history
 * service, the matching service or the frontend is SIGKILLed, or PostgreSQL stopped with
 * `pg_ctl stop -m immediate`, and brought back 0.5 to 5 s later (chaos/cluster-faults.ts); the
 * server kills of `--server-kills` do not apply. The cluster is stopped at the end, also on failure.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { AgentClient } from '../src/client/agent-client';
import { processAlive } from '../src/platform/process-alive';
import { stopCluster } from '../src/temporal-server/cluster/cluster';
import { freePort } from '../src/platform/free-port';
import { type BenchServer, startBenchServer, stopAllBenchServers } from '../bench/support/server';
import {
  CLUSTER_FAULT_KINDS,
  type ChaosCluster,
  type ClusterFaultKind,
  FAULT_LABEL,
  planClusterFaults,
  startChaosCluster,
} from './cluster-faults';
import { type ModelFault, startFaultModel } from './fault-model';
import { startChaosGateway } from './gateway-sender';
import { SLOW_SAMPLE_S, type SlowSample, slowSampleTable, watchForProgress } from './slow-samples';
import { TRIAL_KINDS, type TrialResult, runTrial } from './trials';

const ROOT = path.resolve(__dirname, '..');

function option(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
}

/** A small seeded generator, so a run can be repeated with `--seed`. */
function seeded(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 2 ** 32;
  };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const figures = (values: number[]) => ({
  samples: values.length,
  median: median(values),
  worst: Math.max(0, ...values),
});

/** What a failed or interrupted run must still undo: workers killed, the cluster stopped. */
const cleanups: Array<() => unknown> = [];
async function cleanUp(): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup();
    } catch (error) {
      console.error(`cleaning up: ${(error as Error).message}`);
    }
  }
}

/** A cluster fault as the results tell it. */
interface ClusterFaultRecord {
  kind: ClusterFaultKind;
  /** Trials started when it was injected. */
  afterTrials: number;
  /** Conversations running then (their next event is waited for). */
  conversations: number;
  /** From the fault until the cluster served again. */
  downSeconds: number;
  /** The processes the restart found down: the faulted one, and any that died of it. */
  restarted: string[];
  /** From the fault until each conversation running then recorded its next event. */
  toProgress: number[];
}

async function main() {
  const trials = option('trials', 50);
  const workerCount = option('workers', 3);
  const faultRate = option('fault-rate', 0.25);
  const serverKills = option('server-kills', 2);
  const seed = option('seed', Date.now() % 1_000_000);
  const resultsAt = process.argv.indexOf('--results');
  const resultsDir =
    resultsAt === -1 ? path.join(ROOT, 'chaos', 'results') : path.resolve(process.argv[resultsAt + 1]!);
  const clusterMode = process.argv.includes('--cluster');
  const clusterDirAt = process.argv.indexOf('--cluster-dir');
  const faultPlan = clusterMode ? planClusterFaults(option('cluster-faults', 8), seeded(seed + 1)) : [];
  const random = seeded(seed);
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-chaos-'));
  const ledger = path.join(scratch, 'ledger');
  await writeFile(ledger, '');
  // On a data file, as the embedded server runs for `durable-agent run`, so a killed server comes back with its conversations.
  const dbFile = path.join(scratch, 'temporal.db');
  let server: BenchServer | undefined;
  let cluster: ChaosCluster | undefined;
  if (clusterMode) {
    const dir =
      clusterDirAt === -1
        ? await mkdtemp(path.join(os.tmpdir(), 'durable-agent-chaos-cluster-'))
        : path.resolve(process.argv[clusterDirAt + 1]!);
    const log = (line: string) => console.log(`[cluster] ${line}`);
    // Registered first: a start that fails half-way leaves processes running too.
    cleanups.push(() => stopCluster({ dir, env: process.env, log }));
    cluster = await startChaosCluster({ dir, port: await freePort(), log });
  } else {
    server = await startBenchServer({ log: (line) => console.log(line), dbFile });
  }
  const address = cluster?.address ?? server!.address;
  const port = Number(address.split(':').pop());
  const model = await startFaultModel(faultRate, random);
  const taskQueue = `chaos-${seed}`;
  const workerEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: address,
    TASK_QUEUE: taskQueue,
    OPENAI_BASE_URL: model.baseUrl,
    WORKSPACE: scratch,
    LEDGER: ledger,
  };

  // Workers: a slot whose worker dies is filled again. Those the harness did not kill are counted.
  let finished = false;
  let workerCrashes = 0;
  const workers: Array<ChildProcess | undefined> = [];
  const killedByUs = new Set<ChildProcess>();
  /** Slots whose worker is starting again. */
  const restarting = new Set<number>();
  cleanups.push(() => {
    finished = true;
    for (const worker of workers) worker?.kill('SIGKILL');
  });
  const startWorker = async (slot: number): Promise<void> => {
    for (let attempt = 1; !finished; attempt++) {
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'chaos-worker.ts')], {
        cwd: ROOT,
        env: workerEnv,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      workers[slot] = child;
      const ready = await new Promise<boolean>((resolve) => {
        child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve(true));
        child.once('exit', () => resolve(false));
      });
      if (ready) {
        child.once('exit', () => {
          if (child.pid !== undefined) killedPids.add(child.pid);
          if (killedByUs.has(child) || finished) return;
          workerCrashes++;
          restarting.add(slot);
          void startWorker(slot).finally(() => restarting.delete(slot));
        });
        return;
      }
      // The server may be down a moment (a server kill): try again.
      if (attempt >= 60) throw new Error(`worker ${slot} did not start`);
      await pause(1_000);
    }
  };
  await Promise.all(Array.from({ length: workerCount }, (_, slot) => startWorker(slot)));

  const connection = await Connection.connect({ address });
  const client = new Client({ connection });
  const agent = new AgentClient(client, taskQueue);
  // Every trial's messages go through the gateway, as a service that retries sends them.
  const gateway = await startChaosGateway(agent, random);
  cleanups.push(() => gateway.close());

  const running = new Set<string>();
  // Recovery watchers still polling; all settle before the connection closes (a gRPC retry on a
  // closed channel throws from a timer, out of reach of any catch).
  const watchers = new Set<Promise<unknown>>();
  const recovery = { worker: [] as number[], server: [] as number[] };
  /** The conversations running now and their last event, read before a fault. */
  const snapshot = async () => {
    const before = new Map<string, number>();
    for (const id of running) {
      const status = await agent.status(id).catch(() => undefined);
      if (status) before.set(id, status.lastSeq);
    }
    return before;
  };
  /** Workers killed (by the harness or on their own): an activity or task last held by one waits for a timeout. */
  const killedPids = new Set<number>();
  const slowSamples: SlowSample[] = [];
  /**
   * Fault to progress: until each conversation that was running records its next event; one slower
   * than 5 s is kept with what it was waiting for meanwhile.
   */
  const measure = (before: Map<string, number>, faultAt: number, into: number[], fault: string) => {
    const watcher = Promise.all(
      [...before].map(async ([id, seq]) => {
        const sample = await watchForProgress({
          id,
          lastSeq: seq,
          faultAt,
          fault,
          agent,
          client,
          killedPids,
          finished: () => finished,
        });
        if (!sample) return;
        into.push(sample.seconds);
        if (sample.seconds > SLOW_SAMPLE_S) slowSamples.push(sample);
      }),
    );
    watchers.add(watcher);
    void watcher.finally(() => watchers.delete(watcher));
  };

  // The worker killer: every 0.5 to 2.5 s a random live worker is SIGKILLed and a new one started in its place.
  let kills = 0;
  let stopKilling = false;
  const workerKiller = (async () => {
    while (!stopKilling) {
      await pause(500 + random() * 2_000);
      const live = Array.from({ length: workerCount }, (_, slot) => slot).filter(
        (slot) => !restarting.has(slot),
      );
      // One worker always stays up: with none, progress waits for a restart, which says nothing new.
      if (stopKilling || live.length < 2) continue;
      const slot = live[Math.floor(random() * live.length)]!;
      const before = await snapshot();
      const killedAt = Date.now();
      const victim = workers[slot]!;
      killedByUs.add(victim);
      if (victim.pid !== undefined) killedPids.add(victim.pid);
      victim.kill('SIGKILL');
      kills++;
      restarting.add(slot);
      void startWorker(slot).finally(() => restarting.delete(slot));
      measure(before, killedAt, recovery.worker, 'worker kill');
    }
  })();

  // The server killer: spread over the run, the server is SIGKILLed and started again on its data file.
  let trialsStarted = 0;
  const serverDowntime: number[] = [];
  const serverKiller = (async () => {
    if (clusterMode) return;
    for (let kill = 1; kill <= serverKills; kill++) {
      while (!stopKilling && trialsStarted < (trials * kill) / (serverKills + 1)) await pause(200);
      if (stopKilling) return;
      await pause(random() * 2_000);
      const before = await snapshot();
      const killedAt = Date.now();
      process.kill(server!.pid!, 'SIGKILL');
      while (processAlive(server!.pid!)) await pause(50);
      await server!.stop();
      server = await startBenchServer({ dbFile, port });
      serverDowntime.push((Date.now() - killedAt) / 1_000);
      measure(before, killedAt, recovery.server, 'server kill');
    }
  })();

  // The cluster faulter: fault K of N is injected once K/(N+1) of the trials have started (a trial
  // due after it waits for it, so every fault lands among running conversations), and what it took
  // down is started again 0.5 to 5 s later.
  const clusterFaults: ClusterFaultRecord[] = [];
  const faultDue = (fault: number) => (trials * fault) / (faultPlan.length + 1);
  let faultsInjected = 0;
  let faultFailure: Error | undefined;
  const clusterFaulter = (async () => {
    for (const [at, kind] of faultPlan.entries()) {
      while (!stopKilling && trialsStarted < faultDue(at + 1)) await pause(200);
      if (stopKilling) return;
      await pause(random() * 2_000);
      const before = await snapshot();
      const record: ClusterFaultRecord = {
        kind,
        afterTrials: trialsStarted,
        conversations: before.size,
        downSeconds: 0,
        restarted: [],
        toProgress: [],
      };
      const faultAt = Date.now();
      await cluster!.fault(kind);
      faultsInjected++;
      // Watched from the fault on: a conversation may go on and end while the restart still waits.
      measure(before, faultAt, record.toProgress, FAULT_LABEL[kind]);
      await pause(500 + random() * 4_500);
      record.restarted = await cluster!.restore();
      record.downSeconds = (Date.now() - faultAt) / 1_000;
      console.log(
        `[chaos] ${FAULT_LABEL[kind]}, back after ${record.downSeconds.toFixed(1)} s` +
          ` (started again: ${record.restarted.join(', ') || 'nothing'})`,
      );
      clusterFaults.push(record);
    }
  })().catch((error: Error) => {
    faultFailure = error;
  });
  /** Faults due before trial `index` starts. */
  const faultsDueBefore = (index: number) => faultPlan.filter((_, at) => faultDue(at + 1) <= index).length;

  const results: TrialResult[] = [];
  const concurrency = 5;
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < trials) {
        const index = next++;
        while (!faultFailure && faultsInjected < faultsDueBefore(index)) await pause(100);
        if (faultFailure) throw faultFailure;
        trialsStarted++;
        const id = `chaos-${seed}-${index}`;
        running.add(id);
        const result = await runTrial(index, TRIAL_KINDS[index % TRIAL_KINDS.length]!, {
          agent,
          send: gateway.send,
          seed,
          random,
          runsOf: async (conversationId) => {
            let runs = 0;
            for await (const _ of client.workflow.list({ query: `WorkflowId = '${conversationId}'` })) runs++;
            return runs;
          },
        });
        running.delete(id);
        results.push(result);
        process.stdout.write(result.answered && !result.problems.length ? '.' : 'x');
      }
    }),
  );
  stopKilling = true;
  await Promise.all([workerKiller, serverKiller, clusterFaulter]);
  if (faultFailure) throw faultFailure;
  finished = true;
  await Promise.all(watchers);
  process.stdout.write('\n');
  /** Processes of the cluster down at the end: dead on their own after the last restart. */
  const clusterDownAtEnd = (await cluster?.down()) ?? [];

  // The side effect: each key at most once in the ledger (keys are `trial-N`, `trial-N-sub`, `trial-N-rK`).
  const written = (await readFile(ledger, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' ')[0]!);
  const doubled = [...new Set(written.filter((key, at) => written.indexOf(key) !== at))];
  for (const key of doubled) {
    const trial = /^trial-\d+/.exec(key)?.[0];
    results.find((result) => result.trial === trial)?.problems.push(`side effect ${key} done twice`);
  }

  const lost = results.filter((result) => !result.answered).length;
  const byKind = Object.fromEntries(
    TRIAL_KINDS.map((kind) => [kind, results.filter((result) => result.kind === kind).length]),
  );
  const summary = {
    seed,
    trials,
    trialsByKind: byKind,
    workers: workerCount,
    faultRate,
    workerKills: kills,
    workerCrashes,
    serverKills: serverDowntime.length,
    serverDowntimeSeconds: serverDowntime,
    approvalsDecided: results.reduce((sum, result) => sum + result.approvals, 0),
    continuedAsNew: results.reduce((sum, result) => sum + result.continuedAsNew, 0),
    modelFaults: Object.fromEntries(model.injected as Map<ModelFault, number>),
    conversationsLost: lost,
    sideEffectsDoubled: doubled.length,
    gatewaySends: { retried: gateway.tally.retries, answeredAsReplays: gateway.tally.replays },
    messagesTakenTwice: results.reduce((sum, result) => sum + result.messagesTakenTwice, 0),
    toolCallsCutOffAndReported: results.reduce((sum, result) => sum + result.cutOff, 0),
    otherProblems: results.flatMap((result) =>
      result.problems.map((problem) => `${result.trial} (${result.kind}): ${problem}`),
    ),
    faultToProgressSeconds: {
      samples: recovery.worker.length,
      median: median(recovery.worker),
      worst: Math.max(0, ...recovery.worker),
    },
    serverRestartToProgressSeconds: {
      samples: recovery.server.length,
      median: median(recovery.server),
      worst: Math.max(0, ...recovery.server),
    },
    slowSamples: slowSamples.sort((a, b) => b.seconds - a.seconds),
    trialSeconds: {
      median: median(results.map((r) => r.seconds)),
      worst: Math.max(...results.map((r) => r.seconds)),
    },
    ...(clusterMode
      ? {
          cluster: {
            faults: clusterFaults.map(({ toProgress, ...fault }) => ({
              ...fault,
              toProgressSeconds: figures(toProgress),
            })),
            byKind: Object.fromEntries(
              CLUSTER_FAULT_KINDS.map((kind) => {
                const faults = clusterFaults.filter((fault) => fault.kind === kind);
                return [
                  kind,
                  {
                    faults: faults.length,
                    downSeconds: faults.map((fault) => fault.downSeconds),
                    toProgressSeconds: figures(faults.flatMap((fault) => fault.toProgress)),
                  },
                ];
              }),
            ) as Record<
              ClusterFaultKind,
              { faults: number; downSeconds: number[]; toProgressSeconds: ReturnType<typeof figures> }
            >,
            downAtEnd: clusterDownAtEnd,
          },
        }
      : {}),
  };
  await mkdir(resultsDir, { recursive: true });
  await writeFile(path.join(resultsDir, 'chaos.json'), `${JSON.stringify({ summary, results }, null, 2)}\n`);
  const seconds = (figures: { median: number; worst: number; samples: number }) =>
    `${figures.median.toFixed(1)} s / ${figures.worst.toFixed(1)} s (${figures.samples} samples)`;
  const downtimes = (down: number[]) =>
    `${down.length === 1 ? 'once' : `${down.length} times`}${down.length ? `, down ${down.map((s) => `${s.toFixed(1)} s`).join(', ')}` : ''}`;
  const table = [
    '| measure | value |',
    '| --- | --- |',
    `| trials (conversations) | ${trials}: ${TRIAL_KINDS.map((kind) => `${kind} ${byKind[kind]}`).join(', ')} |`,
    `| workers | ${workerCount}, SIGKILLed ${kills} times, died on their own ${workerCrashes} times |`,
    ...(summary.cluster
      ? [
          `| Temporal cluster | PostgreSQL and 4 services, processes of their own; ${CLUSTER_FAULT_KINDS.map((kind) => `${FAULT_LABEL[kind]} ${downtimes(summary.cluster!.byKind[kind].downSeconds)}`).join('; ')}; processes down at the end: ${clusterDownAtEnd.join(', ') || 'none'} |`,
        ]
      : [
          `| Temporal server | SIGKILLed and restarted ${serverDowntime.length} times, down ${serverDowntime.map((s) => `${s.toFixed(1)} s`).join(', ') || '-'} |`,
        ]),
    `| model faults injected | ${[...model.injected].map(([kind, count]) => `${kind} ${count}`).join(', ') || 'none'} |`,
    `| approvals asked for and given a moment later | ${summary.approvalsDecided} |`,
    `| continued as new | ${summary.continuedAsNew} times |`,
    `| conversations lost (goal 0) | ${lost} |`,
    `| side effects done twice (goal 0) | ${doubled.length} |`,
    `| sends through the gateway tried again / answered as a replay of a message taken | ${summary.gatewaySends.retried} / ${summary.gatewaySends.answeredAsReplays} |`,
    `| messages taken twice (goal 0) | ${summary.messagesTakenTwice} |`,
    `| tool calls cut off by a kill, reported to the model as such | ${summary.toolCallsCutOffAndReported} |`,
    `| worker kill to progress, median / worst | ${seconds(summary.faultToProgressSeconds)} |`,
    ...(summary.cluster
      ? CLUSTER_FAULT_KINDS.map(
          (kind) =>
            `| ${FAULT_LABEL[kind]}, to progress, median / worst | ${seconds(summary.cluster!.byKind[kind].toProgressSeconds)} |`,
        )
      : [`| server kill to progress, median / worst | ${seconds(summary.serverRestartToProgressSeconds)} |`]),
    `| trial time, median / worst | ${summary.trialSeconds.median.toFixed(1)} s / ${summary.trialSeconds.worst.toFixed(1)} s |`,
  ].join('\n');
  const slowTable = slowSampleTable(summary.slowSamples);
  await writeFile(
    path.join(resultsDir, 'summary.md'),
    `${table}\n\n${slowTable}\n\nseed ${seed}\n${summary.otherProblems.map((p) => `- ${p}`).join('\n')}\n`,
  );
  console.log(table);
  console.log(`\n${slowTable}`);
  for (const problem of summary.otherProblems) console.log(`- ${problem}`);
  for (const worker of workers) worker?.kill('SIGKILL');
  await connection.close();
  await model.close();
  await stopAllBenchServers();
  await cleanUp();
  const failed = lost > 0 || doubled.length > 0 || summary.messagesTakenTwice > 0;
  if (cluster && clusterDirAt === -1) {
    // Kept when something was lost: its logs (DIR/logs) say what the services saw.
    if (failed) console.log(`the cluster's directory, with its logs: ${cluster.dir}`);
    else await rm(cluster.dir, { recursive: true, force: true });
  }
  process.exit(failed ? 1 : 0);
}

async function fail(error: Error) {
  console.error(error.stack);
  await stopAllBenchServers();
  await cleanUp();
  process.exit(1);
}

process.on('unhandledRejection', (error: Error) => void fail(error));
// The cluster's processes run in sessions of their own: a Ctrl-C reaches only this process.
if (process.argv.includes('--cluster')) {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void fail(new Error(`stopped by ${signal}`)));
  }
}

main().catch(fail);
