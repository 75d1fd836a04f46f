import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';

/** A child's exit: `exited()` says how once it has, `done` resolves then. */
export interface ProcessExit {
  exited: () => string | undefined;
  done: Promise<void>;
}

export function exitOf(child: ChildProcess): ProcessExit {
  let how: string | undefined = child.exitCode !== null ? `exited with code ${child.exitCode}` : undefined;
  const done = new Promise<void>((resolve) => {
    if (how) return resolve();
    child.once('exit', (code, signal) => {
      how = `exited with ${signal ?? `code ${code}`}`;
      resolve();
    });
    child.once('error', (error) => {
      how = `could not run: ${error.message}`;
      resolve();
    });
  });
  return { exited: () => how, done };
}

/** Signals a process group; one already gone is no error. */
export function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** The last 8 KB a child (and the children it is told to follow) wrote. */
export function captureOutput(child: ChildProcess): {
  text: () => string;
  follow: (other: ChildProcess) => void;
} {
  let recent = '';
  const keep = (chunk: Buffer) => {
    recent = (recent + chunk.toString()).slice(-8_192);
  };
  const follow = (other: ChildProcess) => {
    other.stdout?.on('data', keep);
    other.stderr?.on('data', keep);
  };
  follow(child);
  return { text: () => recent, follow };
}

/** The end of a log file, where a failed start says why. */
export async function tailOf(file: string): Promise<string> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return text.slice(-4_096);
}
