import { processAlive } from '../platform/process-alive';
import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';

/** The embedded server's hold on its data file, recorded next to it so no second server opens it. */
export interface DataFileClaim {
  /** The server now holds the file: while its process lives, the file is taken. */
  recordServer(pid: number): void;
  /** The server was told to stop: others wait for it to go rather than use it. */
  markStopping(): void;
  /** The server stopped: the file is free. */
  release(): void;
}

export interface ClaimOptions {
  /** Whether a server answers on the embedded port: then the file's holder is serving, not stopping. */
  served: () => Promise<boolean>;
  log: (line: string) => void;
  /** How long to wait for a stopping server to let go of the file. Default 30 s. */
  timeoutMs?: number;
}

const POLL_MS = 200;

/**
 * Claims `dataFile` for a server about to start. A claim left by a process that is gone is taken
 * over; one held by a live server that answers, and was not told to stop, means the caller should
 * use that server (`'served'`); one held by a server stopping or not answering yet is waited for,
 * saying so, and refused after `timeoutMs` with the process that holds it named. SQLite would
 * otherwise fail the second server with SQLITE_BUSY.
 */
export async function claimDataFile(
  dataFile: string,
  options: ClaimOptions,
): Promise<DataFileClaim | 'served'> {
  const claimFile = `${dataFile}.lock`;
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  let toldWaiting = false;
  for (;;) {
    try {
      const fd = openSync(claimFile, 'wx', 0o600);
      writeFileSync(fd, JSON.stringify({ pid: process.pid }));
      closeSync(fd);
      let holderPid = process.pid;
      return {
        recordServer: (pid) => {
          holderPid = pid;
          writeFileSync(claimFile, JSON.stringify({ pid }));
        },
        markStopping: () => writeFileSync(claimFile, JSON.stringify({ pid: holderPid, stopping: true })),
        release: () => unlinkSync(claimFile),
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const { pid: holder, stopping } = holderOf(claimFile);
    if (holder === undefined && justWritten(claimFile)) {
      // Another process is writing its claim this very moment.
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      continue;
    }
    if (holder === undefined || !processAlive(holder)) {
      // Left by a process that is gone (killed, or a machine restart).
      try {
        unlinkSync(claimFile);
      } catch {
        // Taken over by another process first.
      }
      continue;
    }
    if (!stopping && (await options.served())) return 'served';
    if (Date.now() > deadline) {
      throw new Error(
        `${dataFile} is held by process ${holder}, a Temporal server that neither answers nor stops; stop it (kill ${holder}) or use another DURABLE_AGENT_DATA_DIR`,
      );
    }
    if (!toldWaiting) {
      options.log(`Waiting for the Temporal server still holding ${dataFile} (pid ${holder}) to stop...`);
      toldWaiting = true;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function holderOf(claimFile: string): { pid?: number; stopping: boolean } {
  try {
    const { pid, stopping } = JSON.parse(readFileSync(claimFile, 'utf8')) as {
      pid?: unknown;
      stopping?: unknown;
    };
    return {
      ...(typeof pid === 'number' && Number.isInteger(pid) && pid > 0 ? { pid } : {}),
      stopping: stopping === true,
    };
  } catch {
    return { stopping: false };
  }
}

function justWritten(claimFile: string): boolean {
  try {
    return Date.now() - statSync(claimFile).mtimeMs < 2_000;
  } catch {
    return false;
  }
}
