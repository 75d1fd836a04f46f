/**
 * `npm run chaos`: conversations run while workers are SIGKILLed at random moments and the model
 * endpoint misbehaves, then every conversation is checked: answered, each tool call with exactly one
 * result, the side effect of the non-idempotent tool never done twice, a call cut off reported as
 * such. Results go to chaos/results/chaos.json and chaos/results/summary.md (RELIABILITY.md holds one
 * run). Arguments: `--trials N` (default 50), `--workers N` (3), `--fault-rate R` (model faults per
 * request, 0.25), `--seed N`, `--results DIR` (default chaos/results).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { AgentClient } from '../src/runtime/agent-client';
import type { Message } from '../src/shared/messages';
import { startBenchServer, stopAllBenchServers } from '../bench/support/server';
import { type ModelFault, startFaultModel } from './fault-model';

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

interface TrialResult {
  trial: string;
  answered: boolean;
  seconds: number;
  problems: string[];
  /** Tool calls a worker's death cut off, reported to the model as timed out. */
  cutOff: number;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

async function main() {
  const trials = option('trials', 50);
  const workerCount = option('workers', 3);
  const faultRate = option('fault-rate', 0.25);
  const seed = option('seed', Date.now() % 1_000_000);
  const resultsAt = process.argv.indexOf('--results');
  const resultsDir =
    resultsAt === -1 ? path.join(ROOT, 'chaos', 'results') : path.resolve(process.argv[resultsAt + 1]!);
  const random = seeded(seed);
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-chaos-'));
  const ledger = path.join(scratch, 'ledger');
  await writeFile(ledger, '');
  const server = await startBenchServer({ log: (line) => console.log(line) });
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

  const workers: ChildProcess[] = [];
  const startWorker = (slot: number) =>
    new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'chaos-worker.ts')], {
        cwd: ROOT,
        env: workerEnv,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      workers[slot] = child;
      child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
      child.once(
        'exit',
        (code, signal) => signal === null && code !== 0 && reject(new Error(`worker exited ${code}`)),
      );
    });
  await Promise.all(Array.from({ length: workerCount }, (_, slot) => startWorker(slot)));

  const connection = await Connection.connect({ address: server.address });
  const agent = new AgentClient(new Client({ connection }), taskQueue);

  // The killer: every 0.5 to 2.5 s a random live worker is SIGKILLed and a new one started in its place.
  let kills = 0;
  let stopKilling = false;
  let finished = false;
  const recovery: number[] = [];
  const running = new Set<string>();
  const restarting = new Set<number>();
  // Recovery watchers still polling; all settle before the connection closes (a gRPC retry on a
  // closed channel throws from a timer, out of reach of any catch).
  const watchers = new Set<Promise<unknown>>();
  const killer = (async () => {
    while (!stopKilling) {
      await new Promise((resolve) => setTimeout(resolve, 500 + random() * 2_000));
      const live = Array.from({ length: workerCount }, (_, slot) => slot).filter(
        (slot) => !restarting.has(slot),
      );
      // One worker always stays up: with none, progress waits for a restart, which says nothing new.
      if (stopKilling || live.length < 2) continue;
      const slot = live[Math.floor(random() * live.length)]!;
      const before = new Map<string, number>();
      for (const id of running) before.set(id, (await agent.status(id).catch(() => undefined))?.lastSeq ?? 0);
      const killedAt = Date.now();
      workers[slot]!.kill('SIGKILL');
      kills++;
      restarting.add(slot);
      void startWorker(slot).finally(() => restarting.delete(slot));
      // Fault to progress: until each conversation that was running records its next event.
      const watcher = Promise.all(
        [...before].map(async ([id, seq]) => {
          for (let waited = 0; waited < 120_000 && !finished; waited += 250) {
            const now = await agent.status(id).catch(() => undefined);
            if (!now || now.lastSeq > seq) return recovery.push((Date.now() - killedAt) / 1_000);
            await new Promise((resolve) => setTimeout(resolve, 250));
          }
        }),
      );
      watchers.add(watcher);
      void watcher.finally(() => watchers.delete(watcher));
    }
  })();

  const results: TrialResult[] = [];
  const concurrency = 5;
  let next = 0;
  const runTrial = async (index: number) => {
    const trial = `trial-${index}`;
    const id = `chaos-${seed}-${index}`;
    const started = Date.now();
    const problems: string[] = [];
    running.add(id);
    let answered = false;
    let cutOff = 0;
    try {
      const sent = await agent.send(id, `Do ${trial}`, {
        options: { approval: { mode: 'auto' }, endAfterFirstRun: true },
      });
      for await (const event of agent.watch(id, {
        afterSeq: sent.afterSeq,
        until: (e) => e.type === 'run_finished',
      })) {
        if (event.type === 'run_finished') {
          answered = event.outcome === 'answered' && event.answer.includes(`answered ${trial}`);
          if (!answered) problems.push(`run ended ${event.outcome}: ${event.answer.slice(0, 200)}`);
        }
      }
      const transcript = (
        await agent.state(id).catch((error: Error) => {
          problems.push(`transcript unreadable: ${error.message}`);
          return undefined;
        })
      )?.transcript;
      if (transcript) problems.push(...checkTranscript(transcript));
      cutOff = (transcript ?? []).filter(
        (m) =>
          m.role === 'toolResult' &&
          (m.details as { errorKind?: string } | undefined)?.errorKind === 'Timeout',
      ).length;
    } catch (error) {
      problems.push(`lost: ${(error as Error).message}`);
    } finally {
      running.delete(id);
    }
    results.push({ trial, answered, seconds: (Date.now() - started) / 1_000, problems, cutOff });
    process.stdout.write(answered && !problems.length ? '.' : 'x');
  };
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < trials) await runTrial(next++);
    }),
  );
  stopKilling = true;
  await killer;
  finished = true;
  await Promise.all(watchers);
  process.stdout.write('\n');

  // The side effect: each key at most once in the ledger.
  const written = (await readFile(ledger, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' ')[0]!);
  const doubled = [...new Set(written.filter((key, at) => written.indexOf(key) !== at))];
  for (const key of doubled)
    results.find((result) => result.trial === key)?.problems.push('side effect done twice');

  const lost = results.filter((result) => !result.answered).length;
  const summary = {
    seed,
    trials,
    workers: workerCount,
    faultRate,
    workerKills: kills,
    modelFaults: Object.fromEntries(model.injected as Map<ModelFault, number>),
    conversationsLost: lost,
    sideEffectsDoubled: doubled.length,
    toolCallsCutOffAndReported: results.reduce((sum, result) => sum + result.cutOff, 0),
    otherProblems: results.flatMap((result) =>
      result.problems.map((problem) => `${result.trial}: ${problem}`),
    ),
    faultToProgressSeconds: {
      samples: recovery.length,
      median: median(recovery),
      worst: Math.max(0, ...recovery),
    },
    trialSeconds: {
      median: median(results.map((r) => r.seconds)),
      worst: Math.max(...results.map((r) => r.seconds)),
    },
  };
  await mkdir(resultsDir, { recursive: true });
  await writeFile(path.join(resultsDir, 'chaos.json'), `${JSON.stringify({ summary, results }, null, 2)}\n`);
  const table = [
    '| measure | value |',
    '| --- | --- |',
    `| trials (conversations) | ${trials} |`,
    `| workers | ${workerCount}, SIGKILLed ${kills} times |`,
    `| model faults injected | ${[...model.injected].map(([kind, count]) => `${kind} ${count}`).join(', ') || 'none'} |`,
    `| conversations lost (goal 0) | ${lost} |`,
    `| side effects done twice (goal 0) | ${doubled.length} |`,
    `| tool calls cut off by a kill, reported to the model as such | ${summary.toolCallsCutOffAndReported} |`,
    `| worker kill to progress, median / worst | ${summary.faultToProgressSeconds.median.toFixed(1)} s / ${summary.faultToProgressSeconds.worst.toFixed(1)} s (${recovery.length} samples) |`,
    `| trial time, median / worst | ${summary.trialSeconds.median.toFixed(1)} s / ${summary.trialSeconds.worst.toFixed(1)} s |`,
  ].join('\n');
  await writeFile(
    path.join(resultsDir, 'summary.md'),
    `${table}\n\nseed ${seed}\n${summary.otherProblems.map((p) => `- ${p}`).join('\n')}\n`,
  );
  console.log(table);
  for (const problem of summary.otherProblems) console.log(`- ${problem}`);
  for (const worker of workers) worker.kill('SIGKILL');
  await connection.close();
  await model.close();
  await stopAllBenchServers();
  process.exit(lost || doubled.length ? 1 : 0);
}

/** Every tool call with exactly one result; a call cut off says so. */
function checkTranscript(transcript: Message[]): string[] {
  const problems: string[] = [];
  const asked = transcript.flatMap((m) =>
    m.role === 'assistant' ? m.content.filter((c) => c.type === 'toolCall') : [],
  );
  for (const call of asked) {
    const results = transcript.filter((m) => m.role === 'toolResult' && m.toolCallId === call.id);
    if (results.length !== 1) problems.push(`${call.id} has ${results.length} results`);
  }
  return problems;
}

main().catch(async (error: Error) => {
  console.error(error.stack);
  await stopAllBenchServers();
  process.exit(1);
});
