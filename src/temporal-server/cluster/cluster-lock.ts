import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { processAlive } from '../../platform/process-alive';

const POLL_MS = 200;

/**
 * Holds `lockFile` for one `start` or `stop` at a time: two at once would start every service
 * twice. A lock left by a process that is gone is taken over; one held by a live process is
 * waited for, saying so (`waitingFor`: what the holder is doing), and refused after `timeoutMs`.
 * Returns the release.
 */
export async function lockCluster(
  lockFile: string,
  log: (line: string) => void,
  timeoutMs = 180_000,
  waitingFor = 'to finish with this cluster',
): Promise<() => void> {
  const deadline = Date.now() + timeoutMs;
  let toldWaiting = false;
  for (;;) {
    try {
      const fd = openSync(lockFile, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lockFile, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = holderOf(lockFile);
    if (holder !== undefined && !processAlive(holder)) {
      rmSync(lockFile, { force: true });
      continue;
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `another durable-agent cluster command (pid ${holder ?? 'unknown'}) holds ${lockFile}; ` +
          'wait for it, or remove the file if that process is not one',
      );
    }
    if (!toldWaiting && holder !== undefined) {
      log(`waiting for durable-agent cluster (pid ${holder}) ${waitingFor}`);
      toldWaiting = true;
    }
    // An undefined holder is a lock being written this very moment.
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

function holderOf(lockFile: string): number | undefined {
  try {
    const pid = Number(readFileSync(lockFile, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
