import { randomUUID } from 'node:crypto';
import { preciseNow } from './support/clock';
import type { BenchContext } from './support/context';
import { InProcessLoop } from './support/floor';
import type { PeerBench, PeerConversation, PeerDeployment, PeerEngine } from './support/peers/engine';
import { peerEngines } from './support/peers/engines';
import { type Summary, mb, round, summarize, table } from './support/stats';
import type { WorkerProcess } from './support/worker-process';

/** A level of the throughput bench: conversations at once, and timed turns per conversation. */
type Level = [conversations: number, turnsPerConversation: number];

interface TurnResult {
  turnMs: Summary;
  ratioMedian: number;
}

interface LevelResult {
  conversations: number;
  /** Conversations started and warm within the warm-up's time limit (the others were not started). */
  started: number;
  turns: number;
  turnsPerSecond: number;
  timedOut: boolean;
  failed: number;
  firstError?: string;
  rssIdleMb: number;
  rssPeakMb: number;
  rssEndMb: number;
}

interface StateCheckpoint {
  turns: number;
  bytes: number;
  bytesPerTurn: number;
}

interface ResumeResult {
  turns: number;
  /** Start of the fresh service process to its serving. */
  serviceStartMs: number;
  /** The first turn on the fresh process (the conversation of `turns` turns picked up again). */
  firstTurnMs: number;
  /** A turn on the old process just before it stopped, for comparison. */
  lastTurnBeforeMs: number;
}

interface CrashResult {
  /** SIGKILL of the service running the tool to the tool's next attempt starting. */
  stepAgainSeconds: Summary;
  /** SIGKILL to the fresh service process serving (part of the above). */
  restartSeconds: Summary;
}

export interface EngineResult {
  /** What ran ("Restate server 1.7.12 ..."), or why the engine could not start. */
  about?: string;
  unavailable?: string;
  turn?: TurnResult;
  throughput?: LevelResult[];
  state?: { checkpoints: StateCheckpoint[]; stoppedEarly?: string };
  crash?: CrashResult;
  resume?: ResumeResult;
  /** Per bench: "cannot: why" (the engine cannot do it) or "failed: why" (it broke here). */
  notes: Partial<Record<PeerBench, string>>;
}

export interface PeersResult {
  floor: Summary;
  turns: number;
  levels: Level[];
  engines: Record<string, EngineResult>;
  table: string;
}

/** Each level's timed part stops there at the latest, as does its warm-up (starting the conversations). */
const LEVEL_LIMIT_SECONDS = 60;
const WARMUP_LIMIT_SECONDS = 120;
const STATE_LIMIT_SECONDS = 120;
const STEP_AGAIN_LIMIT_MS = 120_000;

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
const firstLine = (text: string) => text.split('\n')[0]!.slice(0, 200);

async function withDeployment<T>(
  engine: PeerEngine,
  name: string,
  body: (deployment: PeerDeployment, service: WorkerProcess) => Promise<T>,
): Promise<T> {
  const deployment = await engine.deployment(name);
  try {
    const service = await deployment.startService();
    return await body(deployment, service);
  } finally {
    await deployment.stop();
  }
}

async function measureTurns(engine: PeerEngine, warmup: number, turns: number, floor: Summary) {
  return withDeployment(engine, 'turn', async (deployment) => {
    const conversation = await deployment.open(`peers-turn-${engine.name}-${randomUUID()}`);
    for (let i = 0; i < warmup; i++) await conversation.runTurn();
    const times: number[] = [];
    for (let i = 0; i < turns; i++) {
      const started = preciseNow();
      await conversation.runTurn();
      times.push(preciseNow() - started);
    }
    const turnMs = summarize(times);
    return { turnMs, ratioMedian: round(turnMs.median / floor.median, 1) };
  });
}

/** At most `limit` of `task` at once; after `maxErrors` errors no new one starts. Returns the errors. */
async function inBatches<T>(
  items: T[],
  limit: number,
  maxErrors: number,
  task: (item: T) => Promise<void>,
): Promise<unknown[]> {
  let next = 0;
  const errors: unknown[] = [];
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length && errors.length < maxErrors) {
        await task(items[next++]!).catch((error: unknown) => errors.push(error));
      }
    }),
  );
  return errors;
}

async function measureLevel(engine: PeerEngine, [conversations, turnsEach]: Level): Promise<LevelResult> {
  return withDeployment(engine, `throughput-${conversations}`, async (deployment, service) => {
    const idle = await service.memory(true);
    const driven: PeerConversation[] = [];
    // Every conversation has started and had one turn before timing, as in bench 3.
    const warmupDeadline = Date.now() + WARMUP_LIMIT_SECONDS * 1_000;
    const warmupErrors = await inBatches(
      Array.from({ length: conversations }, (_, i) => i),
      50,
      5,
      async (i) => {
        if (Date.now() > warmupDeadline) return;
        const conversation = await deployment.open(`peers-tp-${engine.name}-${i}-${randomUUID()}`);
        await conversation.runTurn();
        driven.push(conversation);
      },
    );
    await service.memory(true);
    const deadline = Date.now() + LEVEL_LIMIT_SECONDS * 1_000;
    let turns = 0;
    let timedOut = false;
    const started = preciseNow();
    const settled = await Promise.allSettled(
      driven.map(async (conversation) => {
        for (let i = 0; i < turnsEach; i++) {
          if (Date.now() > deadline) {
            timedOut = true;
            return;
          }
          await conversation.runTurn();
          turns++;
        }
      }),
    );
    const seconds = (preciseNow() - started) / 1_000;
    const errors = [
      ...warmupErrors,
      ...settled.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as unknown] : [])),
    ];
    const end = await service.memory();
    return {
      conversations,
      started: driven.length,
      turns,
      turnsPerSecond: round(turns / seconds, 1),
      timedOut,
      failed: errors.length,
      ...(errors.length ? { firstError: firstLine(messageOf(errors[0])) } : {}),
      rssIdleMb: mb(idle.rss),
      rssPeakMb: mb(end.peakRss),
      rssEndMb: mb(end.rss),
    };
  });
}

/**
 * One conversation grows to `checkpoints.at(-1)` turns, its stored bytes measured at each
 * checkpoint; then its service stops and a fresh one picks the conversation up for one more turn.
 */
async function measureStateAndResume(
  engine: PeerEngine,
  checkpoints: number[],
  result: EngineResult,
): Promise<void> {
  const deployment = await engine.deployment('state');
  try {
    await deployment.startService();
    const conversation = await deployment.open(`peers-state-${engine.name}-${randomUUID()}`);
    const began = Date.now();
    const measured: StateCheckpoint[] = [];
    let previous = { turns: 0, bytes: 0 };
    let stoppedEarly: string | undefined;
    let lastTurnMs = Number.NaN;
    for (const checkpoint of checkpoints) {
      while (conversation.turns < checkpoint && !stoppedEarly) {
        if (Date.now() - began > STATE_LIMIT_SECONDS * 1_000) {
          stoppedEarly = `time limit of ${STATE_LIMIT_SECONDS} s reached after ${conversation.turns} turns`;
          break;
        }
        const started = preciseNow();
        await conversation.runTurn();
        lastTurnMs = preciseNow() - started;
      }
      if (conversation.turns === previous.turns) break;
      const bytes = engine.cannot.state ? 0 : await deployment.stateBytes(conversation);
      measured.push({
        turns: conversation.turns,
        bytes,
        bytesPerTurn: Math.round((bytes - previous.bytes) / (conversation.turns - previous.turns)),
      });
      previous = { turns: conversation.turns, bytes };
      if (stoppedEarly) break;
    }
    if (!engine.cannot.state) result.state = { checkpoints: measured, stoppedEarly };
    if (engine.cannot.resume) return;
    // A failure from here on is the resume's, not the state's.
    try {
      await deployment.stop();
      const starting = preciseNow();
      await deployment.startService();
      const serviceStartMs = preciseNow() - starting;
      const started = preciseNow();
      await conversation.runTurn();
      result.resume = {
        turns: conversation.turns - 1,
        serviceStartMs: round(serviceStartMs),
        firstTurnMs: round(preciseNow() - started),
        lastTurnBeforeMs: round(lastTurnMs),
      };
    } catch (error) {
      result.notes.resume = `failed: ${firstLine(messageOf(error))}`;
    }
  } finally {
    await deployment.stop();
  }
}

async function until(check: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs / 1_000} s waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * The service process running a conversation's tool is SIGKILLed while the tool runs, and a fresh
 * one started at once (as a supervisor restarting it would): the time until the engine runs the
 * tool again on the fresh process.
 */
async function measureCrash(engine: PeerEngine, samples: number): Promise<CrashResult> {
  const deployment = await engine.deployment('crash');
  const again: number[] = [];
  const restart: number[] = [];
  try {
    let service = await deployment.startService();
    for (let sample = 0; sample < samples; sample++) {
      const conversation = await deployment.open(`peers-crash-${engine.name}-${randomUUID()}`);
      const starts: number[] = [];
      const listen = (on: WorkerProcess) =>
        on.onTool((report) => report.event === 'start' && starts.push(Date.now()));
      const unsubscribe = [listen(service)];
      try {
        // Not awaited: on engines driven from inside the service the turn's call dies with it.
        conversation.runTurn(engine.crashDirective).catch(() => undefined);
        await until(() => starts.length >= 1, 30_000, 'the tool to start');
        const killedAt = Date.now();
        await service.kill();
        service = await deployment.startService();
        restart.push((Date.now() - killedAt) / 1_000);
        unsubscribe.push(listen(service));
        await until(() => starts.length >= 2, STEP_AGAIN_LIMIT_MS, 'the tool to run again');
        again.push((starts[1]! - killedAt) / 1_000);
      } finally {
        for (const stop of unsubscribe) stop();
      }
    }
  } finally {
    await deployment.stop();
  }
  return { stepAgainSeconds: summarize(again), restartSeconds: summarize(restart) };
}

/** Runs `bench` for `engine` unless it cannot; a failure is noted, never thrown. */
async function attempt(
  context: BenchContext,
  engine: PeerEngine,
  result: EngineResult,
  bench: PeerBench,
  body: () => Promise<void>,
): Promise<void> {
  const cannot = engine.cannot[bench];
  if (cannot) {
    result.notes[bench] = `cannot: ${cannot}`;
    return;
  }
  try {
    await body();
  } catch (error) {
    result.notes[bench] = `failed: ${firstLine(messageOf(error))}`;
    context.log(`  ${engine.name} ${bench} FAILED: ${messageOf(error)}`);
  }
}

/**
 * Bench 10: durable-agent and the peer engines (the @temporalio/ai-sdk peer, Restate, DBOS,
 * LangGraph), each with the same scripted model and tools: turn overhead, throughput and memory,
 * stored state per turn, crash recovery and resume on a fresh process. One engine at a time is
 * running; an engine that cannot start is reported with its reason and the others go on.
 */
export async function peers(context: BenchContext): Promise<PeersResult> {
  const warmup = context.quick ? 3 : 5;
  const turns = context.quick ? 20 : 50;
  const levels: Level[] = context.quick
    ? [
        [1, 10],
        [10, 2],
        [100, 1],
        [500, 1],
      ]
    : [
        [1, 20],
        [10, 5],
        [100, 1],
        [500, 1],
      ];
  const checkpoints = context.quick ? [1, 10, 50] : [1, 10, 50, 100, 200];
  const crashSamples = context.quick ? 1 : 3;

  const floorLoop = new InProcessLoop(context.model.baseUrl);
  for (let i = 0; i < warmup; i++) await floorLoop.runTurn();
  const floorTimes: number[] = [];
  for (let i = 0; i < turns; i++) {
    const started = preciseNow();
    await floorLoop.runTurn();
    floorTimes.push(preciseNow() - started);
  }
  const floor = summarize(floorTimes);
  context.log(`  floor (in-process): median ${floor.median} ms`);

  const engines: Record<string, EngineResult> = {};
  const { list, stopShared } = peerEngines(context);
  try {
    for (const engine of list) {
      const result: EngineResult = { notes: {} };
      engines[engine.name] = result;
      context.log(`  ${engine.name}:`);
      try {
        result.about = await engine.start();
      } catch (error) {
        result.unavailable = firstLine(messageOf(error));
        context.log(`  ${engine.name} cannot start: ${messageOf(error)}`);
        await engine.stop().catch(() => undefined);
        continue;
      }
      try {
        await attempt(context, engine, result, 'turn', async () => {
          result.turn = await measureTurns(engine, warmup, turns, floor);
          context.log(`    turn: median ${result.turn.turnMs.median} ms, p95 ${result.turn.turnMs.p95} ms`);
        });
        await attempt(context, engine, result, 'throughput', async () => {
          result.throughput = [];
          for (const level of levels) {
            const measured = await measureLevel(engine, level);
            result.throughput.push(measured);
            context.log(
              `    ${measured.conversations} conversations: ${measured.turnsPerSecond} turns/s` +
                `${measured.failed ? ` (${measured.failed} failed: ${measured.firstError})` : ''}`,
            );
          }
        });
        await attempt(context, engine, result, 'state', () =>
          measureStateAndResume(engine, checkpoints, result),
        );
        if (result.notes.state?.startsWith('failed')) result.notes.resume = result.notes.state;
        else if (engine.cannot.resume) result.notes.resume = `cannot: ${engine.cannot.resume}`;
        if (result.state) context.log(`    state: ${JSON.stringify(result.state.checkpoints.at(-1))}`);
        if (result.resume) context.log(`    resume: ${JSON.stringify(result.resume)}`);
        await attempt(context, engine, result, 'crash', async () => {
          result.crash = await measureCrash(engine, crashSamples);
          context.log(`    crash: step again after ${result.crash.stepAgainSeconds.median} s (median)`);
        });
      } finally {
        await engine
          .stop()
          .catch((error: unknown) => context.log(`  could not stop ${engine.name}: ${messageOf(error)}`));
      }
    }
  } finally {
    await stopShared();
  }
  return { floor, turns, levels, engines, table: peersTables(floor, levels, checkpoints, engines) };
}

/** The cell of an engine that has no number for a bench: why (a failure's reason is listed below the tables). */
function missing(result: EngineResult, bench: PeerBench): string {
  if (result.unavailable) return 'cannot start (see below)';
  const note = result.notes[bench];
  if (note?.startsWith('failed')) return 'failed (see below)';
  return note ?? '-';
}

function peersTables(
  floor: Summary,
  levels: Level[],
  checkpoints: number[],
  engines: Record<string, EngineResult>,
): string {
  const entries = Object.entries(engines);
  const turnRows: Array<Array<string | number>> = [
    ['in-process loop (floor)', floor.median, floor.p95, '1.0'],
  ];
  for (const [name, result] of entries) {
    if (result.turn)
      turnRows.push([
        name,
        result.turn.turnMs.median,
        result.turn.turnMs.p95,
        result.turn.ratioMedian.toFixed(1),
      ]);
    else turnRows.push([name, missing(result, 'turn'), '', '']);
  }
  const throughputRows = entries.map(([name, result]) => [
    name,
    ...levels.map(([conversations]) => {
      const level = result.throughput?.find((entry) => entry.conversations === conversations);
      if (!level) return missing(result, 'throughput');
      const marks =
        (level.started < level.conversations
          ? ` (${level.started} started in ${WARMUP_LIMIT_SECONDS} s)`
          : '') +
        (level.timedOut ? ' (time limit)' : '') +
        (level.failed ? ` (${level.failed} failed)` : '');
      return `${level.turnsPerSecond}${marks}`;
    }),
  ]);
  const memoryRows = entries.map(([name, result]) => {
    const largest = result.throughput?.at(-1);
    if (!largest?.started) return [name, missing(result, 'throughput'), '', '', ''];
    const perConversationKb = Math.round(
      ((largest.rssEndMb - largest.rssIdleMb) * 1024) / largest.conversations,
    );
    return [name, largest.conversations, largest.rssIdleMb, largest.rssEndMb, perConversationKb];
  });
  const stateRows = entries.map(([name, result]) => [
    name,
    ...checkpoints.map((turns) => {
      const checkpoint = result.state?.checkpoints.find((entry) => entry.turns === turns);
      return checkpoint
        ? `${round(checkpoint.bytes / 1024, 1)} KB (${checkpoint.bytesPerTurn} B/turn)`
        : missing(result, 'state');
    }),
  ]);
  const crashRows = entries.map(([name, result]) =>
    result.crash
      ? [
          name,
          result.crash.stepAgainSeconds.median.toFixed(1),
          result.crash.stepAgainSeconds.max.toFixed(1),
          result.crash.restartSeconds.median.toFixed(1),
        ]
      : [name, missing(result, 'crash'), '', ''],
  );
  const resumeRows = entries.map(([name, result]) =>
    result.resume
      ? [
          name,
          result.resume.turns,
          result.resume.serviceStartMs,
          result.resume.firstTurnMs,
          result.resume.lastTurnBeforeMs,
        ]
      : [name, missing(result, 'resume'), '', '', ''],
  );
  const stopped = entries.flatMap(([name, result]) =>
    result.state?.stoppedEarly ? [`${name}: ${result.state.stoppedEarly}.`] : [],
  );
  const about = entries.map(
    ([name, result]) => `- ${name}: ${result.about ?? `could not start: ${result.unavailable}`}`,
  );
  const failures = entries.flatMap(([name, result]) =>
    Object.entries(result.notes).flatMap(([bench, note]) =>
      note.startsWith('failed') ? [`- ${name}, ${bench}: ${note}`] : [],
    ),
  );
  return [
    about.join('\n'),
    table(['turn (model + no-op tool + model)', 'median ms', 'p95 ms', 'x floor (median)'], turnRows),
    table(
      ['turns/s at N conversations', ...levels.map(([conversations]) => String(conversations))],
      throughputRows,
    ),
    table(
      ['service memory', 'conversations', 'service RSS idle MB', 'RSS with them MB', 'KB per conversation'],
      memoryRows,
    ),
    table(['stored state after N turns', ...checkpoints.map(String)], stateRows),
    ...(stopped.length ? [stopped.join('\n')] : []),
    table(
      [
        'service killed during a tool',
        'tool runs again, median s',
        'worst s',
        'of which the fresh process starting, median s',
      ],
      crashRows,
    ),
    table(
      [
        'resume on a fresh process',
        'turns before',
        'fresh service start ms',
        'first turn on it ms',
        'a turn before the stop ms',
      ],
      resumeRows,
    ),
    ...(failures.length ? [`Failures:\n${failures.join('\n')}`] : []),
  ].join('\n\n');
}
