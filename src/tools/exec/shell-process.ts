import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { type HostLayout, type SandboxSettings, bubblewrapArgv, hostLayout } from './bubblewrap';
import { RUN_MARK_VARIABLE, signalRun } from './process-tree';

/** How long output may still arrive after bash exits, from descendants that hold its pipes. */
const DRAIN_MS = 300;
/** How long a terminated process has to end after SIGTERM before SIGKILL. */
const KILL_GRACE_MS = 2_000;

export interface ShellOptions {
  cwd: string;
  stdin: 'ignore' | 'pipe';
  /**
   * The command's whole environment (see `childEnvironment`); the worker's own is never inherited.
   * The run's mark is added to it.
   */
  env: Readonly<Record<string, string>>;
  /** Seconds after which coreutils `timeout` (where installed) kills the process group even with no one left to do it. */
  backstopSeconds?: number;
  /** Run the command inside a bubblewrap sandbox confined to `cwd` (the workspace). */
  sandbox?: SandboxSettings;
}

export interface ShellExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A running `bash -c command` and everything it starts. */
export interface ShellRun {
  readonly child: ChildProcess;
  /**
   * Settles when the command is over: bash has exited and its output drained. Output is read until
   * the pipes close, or for a short while after bash exits when descendants still hold them; the
   * pipes are then destroyed, so a leftover process can neither keep the run open nor add to it.
   * Whatever the command left running is then terminated (SIGTERM, SIGKILL a little later): a
   * command's processes never outlive it; the first sweep is done when this settles. Rejects when
   * bash could not be started.
   */
  readonly ended: Promise<ShellExit>;
  /** Sends `signal` to every process of the run, including those that left its group or session. */
  signal(signal: NodeJS.Signals): Promise<void>;
  /** SIGTERM to every process of the run, SIGKILL a little later to whatever is still there. */
  terminate(): void;
  /** The run's mark, for a synchronous sweep when the worker exits. */
  readonly mark: string;
}

/**
 * Starts `bash -c command` in a process group of its own, with exactly `options.env` plus a mark
 * that lets `signal` find everything the command starts. A background process outlives a worker
 * killed with SIGKILL by at most `backstopSeconds` (its process group; what left the group, at
 * most until it ends by itself).
 */
export function spawnShell(command: string, options: ShellOptions): ShellRun {
  // No startup files: bash sources ~/.bashrc when its stdin is a socket (as Node's pipes are) and SHLVL is
  // below 2, which the allowlisted environment leaves unset; a command must not depend on the worker's dotfiles.
  const mark = randomBytes(12).toString('hex');
  const shell = options.sandbox
    ? bubblewrapArgv(command, {
        workspace: options.cwd,
        env: { ...options.env, [RUN_MARK_VARIABLE]: mark },
        settings: options.sandbox,
        layout: (layout ??= hostLayout()),
      })
    : ['bash', '--norc', '--noprofile', '-c', command];
  const argv =
    options.backstopSeconds !== undefined && hasTimeoutCommand()
      ? ['timeout', '--kill-after=5s', `${Math.ceil(options.backstopSeconds)}s`, ...shell]
      : shell;
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: options.cwd,
    detached: true,
    env: { ...options.env, [RUN_MARK_VARIABLE]: mark },
    stdio: [options.stdin, 'pipe', 'pipe'],
  });
  const signal = async (sig: NodeJS.Signals) => {
    killProcessGroup(child.pid, sig);
    await signalRun(mark, sig);
  };
  const terminateNow = async () => {
    await signal('SIGTERM');
    setTimeout(() => void signal('SIGKILL'), KILL_GRACE_MS).unref();
  };
  const ended = new Promise<ShellExit>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, exitSignal) => {
      const done = () => {
        clearTimeout(drain);
        child.stdout?.destroy();
        child.stderr?.destroy();
        child.stdin?.destroy();
        resolve({ code, signal: exitSignal });
      };
      const drain = setTimeout(done, DRAIN_MS);
      child.once('close', done);
    });
  }).then(async (exit) => {
    await terminateNow();
    return exit;
  });
  return { child, ended, signal, terminate: () => void terminateNow(), mark };
}

export function killProcessGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // The group is already gone.
  }
}

let layout: HostLayout | undefined;
let timeoutCommand: boolean | undefined;
function hasTimeoutCommand(): boolean {
  timeoutCommand ??= spawnSync('timeout', ['--version'], { stdio: 'ignore' }).status === 0;
  return timeoutCommand;
}
