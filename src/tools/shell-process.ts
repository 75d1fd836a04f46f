import { type ChildProcess, spawn, spawnSync } from 'node:child_process';

/**
 * Starts `bash -c command` in a process group of its own, so `killProcessGroup` reaches everything
 * it starts. With `backstopSeconds`, coreutils `timeout` (where installed) kills the group after
 * that long even when no one is left to do it: a background process outlives a worker killed with
 * SIGKILL by at most that.
 */
export function spawnShell(
  command: string,
  options: { cwd: string; stdin: 'ignore' | 'pipe'; backstopSeconds?: number },
): ChildProcess {
  const shell = ['bash', '-c', command];
  const argv =
    options.backstopSeconds !== undefined && hasTimeoutCommand()
      ? ['timeout', '--kill-after=5s', `${Math.ceil(options.backstopSeconds)}s`, ...shell]
      : shell;
  return spawn(argv[0]!, argv.slice(1), {
    cwd: options.cwd,
    detached: true,
    stdio: [options.stdin, 'pipe', 'pipe'],
  });
}

export function killProcessGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

let timeoutCommand: boolean | undefined;
function hasTimeoutCommand(): boolean {
  timeoutCommand ??= spawnSync('timeout', ['--version'], { stdio: 'ignore' }).status === 0;
  return timeoutCommand;
}
