/**
 * Fault-to-progress samples and, for the slow ones, what the conversation was waiting for: read
 * 4.5 s after the fault and every 5 s after that until the conversation records its next event.
 */
import type { Client } from '@temporalio/client';
import type { AgentClient } from '../src/client/agent-client';
import { type StallCause, type StallCauseKind, stallCause } from './stall-cause';

/** A sample slower than this is attributed to its cause. */
export const SLOW_SAMPLE_S = 5;
/** When the first reading is taken: before SLOW_SAMPLE_S, so every slow sample has one. */
const FIRST_READING_MS = 4_500;
const READING_EVERY_MS = 5_000;
const POLL_MS = 250;
const GIVE_UP_MS = 120_000;

export interface SlowSample {
  conversation: string;
  fault: string;
  seconds: number;
  /** What it waited for, each reading with its time after the fault; empty for a fast sample. */
  causes: Array<StallCause & { atSeconds: number }>;
  /** The cause read most often (the first of those read as often): what the sample is attributed to. */
  attributedTo?: StallCauseKind;
}

export interface ProgressWatch {
  id: string;
  /** The conversation's last event before the fault. */
  lastSeq: number;
  faultAt: number;
  fault: string;
  agent: AgentClient;
  client: Client;
  killedPids: ReadonlySet<number>;
  finished: () => boolean;
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until conversation `id` records an event after `lastSeq` (or ends); undefined when it never
 * did, or had ended before the fault. What it waits for is read on a clock of its own: the status
 * query itself can wait for seconds behind a workflow task held by a dead worker.
 */
export async function watchForProgress(watch: ProgressWatch): Promise<SlowSample | undefined> {
  let lastSeq = watch.lastSeq;
  const causes: SlowSample['causes'] = [];
  let done = false;
  let pendingApprovals = 0;
  const elapsed = () => Date.now() - watch.faultAt;
  const reading = (async () => {
    for (let next = FIRST_READING_MS; next < GIVE_UP_MS; next += READING_EVERY_MS) {
      while (!done && !watch.finished() && elapsed() < next) await pause(POLL_MS);
      if (done || watch.finished()) return;
      const cause = await stallCause(watch.client, watch.id, watch.killedPids, async () => pendingApprovals);
      if (!done) causes.push({ ...cause, atSeconds: elapsed() / 1_000 });
    }
  })();
  try {
    while (!watch.finished() && elapsed() < GIVE_UP_MS) {
      const progress = await readProgress(watch, lastSeq);
      if (progress.kind === 'ended before the fault') return undefined;
      if (progress.kind === 'at') {
        const seconds = (progress.at - watch.faultAt) / 1_000;
        const slow = seconds > SLOW_SAMPLE_S ? causes.filter((cause) => cause.atSeconds < seconds) : [];
        return {
          conversation: watch.id,
          fault: watch.fault,
          seconds,
          causes: slow,
          ...(slow.length > 0 ? { attributedTo: mostRead(slow) } : {}),
        };
      }
      lastSeq = progress.lastSeq;
      pendingApprovals = progress.pendingApprovals ?? pendingApprovals;
      await pause(POLL_MS);
    }
    return undefined;
  } finally {
    done = true;
    await reading;
  }
}

type Progress =
  | { kind: 'at'; at: number }
  | { kind: 'none yet'; lastSeq: number; pendingApprovals?: number }
  | { kind: 'ended before the fault' };

/**
 * When the conversation moved after the fault, in workflow time: the time its next event was
 * recorded, not when a poll saw it (a query can wait long behind a dead worker's task, or fail while
 * a closed conversation is replayed), else the time it closed. Events recorded before the fault (the
 * snapshot taken before it may be a moment old) do not count.
 */
async function readProgress(watch: ProgressWatch, lastSeq: number): Promise<Progress> {
  const closedAt = await closeTime(watch.client, watch.id);
  if (closedAt !== undefined && closedAt < watch.faultAt) return { kind: 'ended before the fault' };
  const now = await watch.agent.status(watch.id).catch(() => undefined);
  if (now && now.lastSeq > lastSeq) {
    const events = await watch.agent.events(watch.id, lastSeq).catch(() => undefined);
    const next = events?.find((event) => event.at >= watch.faultAt);
    if (next) return { kind: 'at', at: next.at };
    if (events) return { kind: 'none yet', lastSeq: now.lastSeq, pendingApprovals: now.pendingApprovals };
  }
  if (closedAt !== undefined) return { kind: 'at', at: closedAt };
  return { kind: 'none yet', lastSeq, ...(now ? { pendingApprovals: now.pendingApprovals } : {}) };
}

/** When the conversation's latest execution closed; undefined while it runs or cannot be read. */
async function closeTime(client: Client, id: string): Promise<number | undefined> {
  const description = await client.workflow
    .getHandle(id)
    .describe()
    .catch(() => undefined);
  return description?.closeTime?.getTime();
}

function mostRead(causes: SlowSample['causes']): StallCauseKind {
  const counts = new Map<StallCauseKind, number>();
  for (const { kind } of causes) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return [...counts].reduce((best, entry) => (entry[1] > best[1] ? entry : best))[0];
}

/** The report's section on slow samples: by cause, then each sample with its readings. */
export function slowSampleTable(samples: readonly SlowSample[]): string {
  if (samples.length === 0) return `No fault-to-progress sample took over ${SLOW_SAMPLE_S} s.`;
  const byCause = new Map<string, number[]>();
  for (const sample of samples) {
    const kind = sample.attributedTo ?? 'unread';
    byCause.set(kind, [...(byCause.get(kind) ?? []), sample.seconds]);
  }
  const lines = [
    `Samples over ${SLOW_SAMPLE_S} s, by what the conversation was waiting for:`,
    '',
    '| waiting for | samples | worst |',
    '| --- | --- | --- |',
    ...[...byCause]
      .sort((a, b) => Math.max(...b[1]) - Math.max(...a[1]))
      .map(([kind, values]) => `| ${kind} | ${values.length} | ${Math.max(...values).toFixed(1)} s |`),
    '',
    '| sample | fault | conversation | readings (s after the fault: what it waited for) |',
    '| --- | --- | --- | --- |',
    ...samples.map(
      (sample) =>
        `| ${sample.seconds.toFixed(1)} s | ${sample.fault} | ${sample.conversation} | ${sample.causes
          .map((cause) => `${cause.atSeconds.toFixed(1)}: ${cause.kind} (${cause.detail})`)
          .join('; ')
          .replaceAll('|', '/')} |`,
    ),
  ];
  return lines.join('\n');
}
