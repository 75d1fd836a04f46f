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
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { AgentClient } from '../src/client/agent-client';
import { processAlive } from '../src/platform/process-alive';
import { type BenchServer, startBenchServer, stopAllBenchServers } from '../bench/support/server';
import { type ModelFault, startFaultModel } from './fault-model';
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

async function main() {
  const trials = option('trials', 50);
  const workerCount = option('workers', 3);
  const faultRate = option('fault-rate', 0.25);
  const serverKills = option('server-kills', 2);
  const seed = option('seed', Date.now() % 1_000_000);
  const resultsAt = process.argv.indexOf('--results');
  const resultsDir =
    resultsAt === -1 ? path.join(ROOT, 'chaos', 'results') : path.resolve(process.argv[resultsAt + 1]!);
  const random = seeded(seed);
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-chaos-'));
  const ledger = path.join(scratch, 'ledger');
  await writeFile(ledger, '');
  // On a data file, as the embedded server runs for `durable-agent run`, so a killed server comes back with its conversations.
  const dbFile = path.join(scratch, 'temporal.db');
  let server: BenchServer = await startBenchServer({ log: (line) => console.log(line), dbFile });
  const port = Number(server.address.split(':').pop());
  const model = await startFaultModel(faultRate, random);
  const taskQueue = `chaos-${seed}`;
  const workerEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: server.address,
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

  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  const agent = new AgentClient(client, taskQueue);

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
  /** Fault to progress: until each conversation that was running records its next event. */
  const measure = (before: Map<string, number>, faultAt: number, into: number[]) => {
    const watcher = Promise.all(
      [...before].map(async ([id, seq]) => {
        for (let waited = 0; waited < 120_000 && !finished; waited += 250) {
          const now = await agent.status(id).catch(() => undefined);
          if (now && now.lastSeq > seq) return into.push((Date.now() - faultAt) / 1_000);
          await pause(250);
        }
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
      victim.kill('SIGKILL');
      kills++;
      restarting.add(slot);
      void startWorker(slot).finally(() => restarting.delete(slot));
      measure(before, killedAt, recovery.worker);
    }
  })();

  // The server killer: spread over the run, the server is SIGKILLed and started again on its data file.
  let trialsStarted = 0;
  const serverDowntime: number[] = [];
  const serverKiller = (async () => {
    for (let kill = 1; kill <= serverKills; kill++) {
      while (!stopKilling && trialsStarted < (trials * kill) / (serverKills + 1)) await pause(200);
      if (stopKilling) return;
      await pause(random() * 2_000);
      const before = await snapshot();
      const killedAt = Date.now();
      process.kill(server.pid!, 'SIGKILL');
      while (processAlive(server.pid!)) await pause(50);
      await server.stop();
      server = await startBenchServer({ dbFile, port });
      serverDowntime.push((Date.now() - killedAt) / 1_000);
      measure(before, killedAt, recovery.server);
    }
  })();

  const results: TrialResult[] = [];
  const concurrency = 5;
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < trials) {
        const index = next++;
        trialsStarted++;
        const id = `chaos-${seed}-${index}`;
        running.add(id);
        const result = await runTrial(index, TRIAL_KINDS[index % TRIAL_KINDS.length]!, {
          agent,
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
  await Promise.all([workerKiller, serverKiller]);
  finished = true;
  await Promise.all(watchers);
  process.stdout.write('\n');

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
    trialSeconds: {
      median: median(results.map((r) => r.seconds)),
      worst: Math.max(...results.map((r) => r.seconds)),
    },
  };
  await mkdir(resultsDir, { recursive: true });
  await writeFile(path.join(resultsDir, 'chaos.json'), `${JSON.stringify({ summary, results }, null, 2)}\n`);
  const seconds = (figures: { median: number; worst: number; samples: number }) =>
    `${figures.median.toFixed(1)} s / ${figures.worst.toFixed(1)} s (${figures.samples} samples)`;
  const table = [
    '| measure | value |',
    '| --- | --- |',
    `| trials (conversations) | ${trials}: ${TRIAL_KINDS.map((kind) => `${kind} ${byKind[kind]}`).join(', ')} |`,
    `| workers | ${workerCount}, SIGKILLed ${kills} times, died on their own ${workerCrashes} times |`,
    `| Temporal server | SIGKILLed and restarted ${serverDowntime.length} times, down ${serverDowntime.map((s) => `${s.toFixed(1)} s`).join(', ') || '-'} |`,
    `| model faults injected | ${[...model.injected].map(([kind, count]) => `${kind} ${count}`).join(', ') || 'none'} |`,
    `| approvals asked for and given a moment later | ${summary.approvalsDecided} |`,
    `| continued as new | ${summary.continuedAsNew} times |`,
    `| conversations lost (goal 0) | ${lost} |`,
    `| side effects done twice (goal 0) | ${doubled.length} |`,
    `| tool calls cut off by a kill, reported to the model as such | ${summary.toolCallsCutOffAndReported} |`,
    `| worker kill to progress, median / worst | ${seconds(summary.faultToProgressSeconds)} |`,
    `| server kill to progress, median / worst | ${seconds(summary.serverRestartToProgressSeconds)} |`,
    `| trial time, median / worst | ${summary.trialSeconds.median.toFixed(1)} s / ${summary.trialSeconds.worst.toFixed(1)} s |`,
  ].join('\n');
  await writeFile(
    path.join(resultsDir, 'summary.md'),
    `${table}\n\nseed ${seed}\n${summary.otherProblems.map((p) => `- ${p}`).join('\n')}\n`,
  );
  console.log(table);
  for (const problem of summary.otherProblems) console.log(`- ${problem}`);
  for (const worker of workers) worker?.kill('SIGKILL');
  await connection.close();
  await model.close();
  await stopAllBenchServers();
  process.exit(lost || doubled.length ? 1 : 0);
}

main().catch(async (error: Error) => {
  console.error(error.stack);
  await stopAllBenchServers();
  process.exit(1);
});
