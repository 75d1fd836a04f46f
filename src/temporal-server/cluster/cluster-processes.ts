import { readFileSync, readlinkSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { processAlive } from '../../platform/process-alive';

/**
 * Whether `pid` is a live process whose command line contains every one of `marks` (a recorded pid
 * may since have gone to another program), working in `cwd` when given. A zombie is not live: it
 * has exited and only waits for a parent that may never reap it. Without /proc, a live pid is
 * taken on trust.
 */
export function runningAs(pid: number | undefined, marks: readonly string[], cwd?: string): boolean {
  if (pid === undefined || !processAlive(pid)) return false;
  let stat: string;
  let commandLine: string[];
  let workingIn: string | undefined;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    if (cwd !== undefined) workingIn = readlinkSync(`/proc/${pid}/cwd`);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    // ENOENT: gone since kill(pid, 0), or no /proc at all (then /proc itself is missing).
    if (code === 'ENOENT') return !procMounted();
    throw error;
  }
  // The state letter follows the command name, which is in parentheses and may hold spaces.
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  if (state === 'Z' || state === 'X') return false;
  return marks.every((mark) => commandLine.includes(mark)) && (cwd === undefined || workingIn === cwd);
}

function procMounted(): boolean {
  try {
    readFileSync('/proc/self/stat');
    return true;
  } catch {
    return false;
  }
}

/**
 * Stops `pid` (while it is still `stillRunning`): SIGTERM, then SIGKILL when it has not exited
 * after `graceMs`. Resolves once it is gone.
 */
export async function terminate(pid: number, stillRunning: () => boolean, graceMs: number): Promise<void> {
  if (!stillRunning()) return;
  signal(pid, 'SIGTERM');
  if (await gone(stillRunning, graceMs)) return;
  signal(pid, 'SIGKILL');
  if (!(await gone(stillRunning, 10_000))) throw new Error(`process ${pid} outlived SIGKILL`);
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** Waits up to `timeoutMs` for `stillRunning` to turn false; whether it did. */
export async function gone(stillRunning: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (stillRunning()) {
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return true;
}

/** The last lines of a log file, where a process that failed says why. */
export async function logTail(file: string, lines = 15): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.trimEnd().split('\n').slice(-lines).join('\n') || '(empty)';
}
