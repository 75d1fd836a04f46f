import { spawn } from 'node:child_process';

/** A process that holds secrets the way a worker or a database client does; see `startSecretHolder`. */
export interface SecretHolder {
  pid: number;
  /** A word only its command line has, to find it by (`pgrep -f`). */
  name: string;
  stop(): Promise<void>;
}

/**
 * Starts a long-lived process with `env` as its initial environment (what /proc/<pid>/environ
 * shows; a variable set later in a running process never appears there) and `args` on its command
 * line (/proc/<pid>/cmdline, readable by every user). Commands that must not see the host's
 * processes are pointed at it.
 */
export async function startSecretHolder(
  name: string,
  env: Record<string, string>,
  args: string[],
): Promise<SecretHolder> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)', name, ...args], {
    env: { ...env, PATH: process.env.PATH ?? '/usr/bin:/bin' },
    stdio: 'ignore',
  });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', reject);
  });
  return {
    pid: child.pid!,
    name,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
  };
}
