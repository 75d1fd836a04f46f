import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { childEnvironment } from '../../tools/exec/child-environment';
import type { ClusterFiles } from './cluster-files';
import { runningAs, terminate } from './cluster-processes';
import type { TemporalServerBuild } from './temporal-server-build';

/** Temporal's services, each a process of its own running the one server program. */
export const TEMPORAL_SERVICES = ['frontend', 'history', 'matching', 'worker'] as const;
export type TemporalService = (typeof TEMPORAL_SERVICES)[number];

/** How long a service is given to shut down on SIGTERM (history hands its shards over) before SIGKILL. */
const SHUTDOWN_GRACE_MS = 20_000;

/** Whether `pid` is this cluster's `service` process, alive: that service, started in the cluster's directory. */
export function serviceRunning(
  files: ClusterFiles,
  service: TemporalService,
  pid: number | undefined,
): boolean {
  return runningAs(pid, ['start', '--service', service], files.dir);
}

/**
 * Starts `service` in a session of its own, so it outlives this process and a Ctrl-C in its
 * terminal, writing to its log file. Returns its pid.
 */
export function startService(
  build: TemporalServerBuild,
  files: ClusterFiles,
  service: TemporalService,
  /** Its whole configuration, read by the server's built-in template (cluster-config.ts). */
  environment: Record<string, string>,
): number {
  const out = openSync(files.logOf(service), 'a', 0o600);
  try {
    const child = spawn(
      build.server,
      // No authorizer: the services listen on 127.0.0.1 only (the flag silences the server's warning).
      ['--allow-no-auth', 'start', '--service', service],
      {
        cwd: files.dir,
        detached: true,
        stdio: ['ignore', out, out],
        // None of this process's settings or secrets: its environment configures the server.
        env: { ...childEnvironment(process.env), ...environment },
      },
    );
    // A failure to start at all (ENOENT) shows as no pid; the event would otherwise go unhandled.
    child.on('error', () => undefined);
    if (child.pid === undefined) throw new Error(`could not run ${build.server}`);
    child.unref();
    return child.pid;
  } finally {
    closeSync(out);
  }
}

/** Stops `service`'s process, if it is still this cluster's: SIGTERM, then SIGKILL after a grace period. */
export async function stopService(
  files: ClusterFiles,
  service: TemporalService,
  pid: number | undefined,
): Promise<void> {
  if (pid === undefined) return;
  await terminate(pid, () => serviceRunning(files, service, pid), SHUTDOWN_GRACE_MS);
}
