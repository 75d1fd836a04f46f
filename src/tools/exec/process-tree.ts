import { readFileSync, readdirSync } from 'node:fs';
import { readFile, readdir } from 'node:fs/promises';

/**
 * The variable that marks every process a command started: its value is a random token per run,
 * inherited by everything the command starts unless a process deliberately drops it.
 */
export const RUN_MARK_VARIABLE = 'DURABLE_AGENT_RUN';

/** Sweeps of /proc before signalling: each stops what it found, so a process forking in a loop runs out of rounds to hide in. */
const MAX_ROUNDS = 4;
/** /proc files read at once, so a machine with many processes does not exhaust file descriptors. */
const READ_BATCH = 64;

interface ProcessInfo {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  marked: boolean;
}

/**
 * Signals every process of a run: those whose initial environment carries the run's mark, the
 * groups and sessions they lead, and every descendant of any of them by parent chain. This reaches
 * what left the run's process group or session (`setsid`, a double fork) as long as it kept the
 * mark or its parent is still found. Found processes are stopped first and the sweep repeated, so
 * nothing forks away between finding and signalling; then `signal` is sent and the stopped ones
 * continued, so a gentle signal is handled. Reads /proc asynchronously; where there is no /proc it
 * finds nothing and the caller's process-group kill is all there is.
 *
 * What it cannot reach: a process that dropped the mark from its environment and whose parent
 * exited before the sweep (it is reparented away from the run), or a process run as another user.
 */
export async function signalRun(mark: string, signal: NodeJS.Signals): Promise<void> {
  const stopped = new Set<number>();
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const found = runMembers(await readProcesses(mark)).filter((pid) => !stopped.has(pid));
    if (found.length === 0) break;
    for (const pid of found) if (send(pid, 'SIGSTOP')) stopped.add(pid);
  }
  finish(stopped, signal);
}

/**
 * `signalRun` for several runs at once with blocking reads, for the worker's exit handler, where
 * nothing asynchronous runs any more.
 */
export function signalRunsSync(marks: readonly string[], signal: NodeJS.Signals): void {
  if (marks.length === 0) return;
  const stopped = new Set<number>();
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const found = runMembers(readProcessesSync(marks)).filter((pid) => !stopped.has(pid));
    if (found.length === 0) break;
    for (const pid of found) if (send(pid, 'SIGSTOP')) stopped.add(pid);
  }
  finish(stopped, signal);
}

function finish(stopped: ReadonlySet<number>, signal: NodeJS.Signals): void {
  for (const pid of stopped) send(pid, signal);
  if (signal !== 'SIGKILL' && signal !== 'SIGSTOP') for (const pid of stopped) send(pid, 'SIGCONT');
}

/** The pids of a run among `processes`: marked ones, and by fixpoint what they lead or parent. Never this process. */
export function runMembers(processes: readonly ProcessInfo[]): number[] {
  const members = new Set(processes.filter((info) => info.marked).map((info) => info.pid));
  members.delete(process.pid);
  for (let grew = true; grew;) {
    grew = false;
    for (const info of processes) {
      if (members.has(info.pid) || info.pid === process.pid || info.pid <= 1) continue;
      if (members.has(info.ppid) || members.has(info.pgid) || members.has(info.sid)) {
        members.add(info.pid);
        grew = true;
      }
    }
  }
  return [...members];
}

function send(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

async function readProcesses(mark: string): Promise<ProcessInfo[]> {
  const pids = await readdir('/proc').then(numeric, () => []);
  const needles = needlesOf([mark]);
  const found: ProcessInfo[] = [];
  for (let start = 0; start < pids.length; start += READ_BATCH) {
    const batch = await Promise.all(
      pids.slice(start, start + READ_BATCH).map(async (pid) => {
        const [stat, environ] = await Promise.all([
          readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined),
          readFile(`/proc/${pid}/environ`).catch(() => undefined),
        ]);
        return parse(pid, stat, environ, needles);
      }),
    );
    for (const info of batch) if (info) found.push(info);
  }
  return found;
}

function readProcessesSync(marks: readonly string[]): ProcessInfo[] {
  let pids: number[];
  try {
    pids = numeric(readdirSync('/proc'));
  } catch {
    return [];
  }
  const needles = needlesOf(marks);
  const found: ProcessInfo[] = [];
  for (const pid of pids) {
    const info = parse(
      pid,
      readOrUndefined(`/proc/${pid}/stat`, 'utf8'),
      readOrUndefined(`/proc/${pid}/environ`),
      needles,
    );
    if (info) found.push(info);
  }
  return found;
}

function readOrUndefined(file: string): Buffer | undefined;
function readOrUndefined(file: string, encoding: 'utf8'): string | undefined;
function readOrUndefined(file: string, encoding?: 'utf8'): Buffer | string | undefined {
  try {
    return encoding ? readFileSync(file, encoding) : readFileSync(file);
  } catch {
    return undefined;
  }
}

const numeric = (names: string[]): number[] => names.filter((name) => /^\d+$/.test(name)).map(Number);

/**
 * `stat` is `pid (comm) state ppid pgrp session …`; the command name may hold spaces and
 * parentheses, so the fields are read after its last `)`. The mark must be a whole entry of the
 * NUL-separated environment, so a longer value with the mark as its prefix does not match.
 */
function parse(
  pid: number,
  stat: string | undefined,
  environ: Buffer | undefined,
  needles: readonly Buffer[],
): ProcessInfo | undefined {
  if (stat === undefined) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [ppid, pgid, sid] = [Number(fields[1]), Number(fields[2]), Number(fields[3])];
  if (!Number.isInteger(ppid) || !Number.isInteger(pgid) || !Number.isInteger(sid)) return undefined;
  const marked =
    environ !== undefined &&
    needles.some(
      (needle) =>
        environ.subarray(0, needle.length - 1).equals(needle.subarray(1)) || environ.includes(needle),
    );
  return { pid, ppid, pgid, sid, marked };
}

/** Each mark as a whole NUL-delimited environment entry; the first entry lacks the leading NUL. */
const needlesOf = (marks: readonly string[]): Buffer[] =>
  marks.map((mark) => Buffer.from(`\0${RUN_MARK_VARIABLE}=${mark}\0`));
