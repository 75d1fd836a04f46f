import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { type HostLayout, type SandboxSettings, bubblewrapArgv, hostLayout } from './bubblewrap';
import type { CommandCgroups, RunCgroup } from './command-cgroups';
import { type DiskLimits, type DiskStop, type DiskWatchdog, diskWatchdog } from './disk-watchdog';
import { RUN_MARK_VARIABLE, signalRun, signalRunsSync } from './process-tree';

/** How long output may still arrive after bash exits, from descendants that hold its pipes. */
const DRAIN_MS = 300;
/** How long a terminated process has to end after SIGTERM before SIGKILL. */
const KILL_GRACE_MS = 2_000;
/**
 * Run by /bin/sh before the command: writes its own pid to each cgroup.procs file named before
 * `--`, then becomes the command. So the command is in its cgroup before it runs, and with it
 * everything it ever starts. It never runs outside: a failed write ends it with 125.
 */
const JOIN_CGROUP = `while [ "$1" != -- ]; do echo $$ > "$1" || { echo "durable-agent: the command could not enter its cgroup ($1)" >&2; exit 125; }; shift; done; shift; exec "$@"`;

/** Bounds on a whole run, whatever it starts. */
export interface RunLimits {
  /** Where the run gets a cgroup of its own; without one its processes are found by the environment mark. */
  cgroups?: CommandCgroups;
  /** `pids.max` of the run's cgroup: tasks (processes and threads) at once. */
  processes: number;
  /** What the run may take of the disk; the watchdog checks the file systems it writes to. */
  disk?: DiskLimits;
  /** The watchdog to use; the worker process's shared one when absent (tests pass one with a fake disk). */
  watchdog?: DiskWatchdog;
}

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
  /** The run's cgroup, process limit and disk limits; none when absent. */
  limits?: RunLimits;
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
  /** SIGKILL to every process of the run with blocking calls, for an exit handler. */
  killSync(): void;
  /** The run's mark, for a synchronous sweep when the worker exits. */
  readonly mark: string;
  /** The run's cgroup; absent where none could be made (the mark is all there is then). */
  readonly cgroup: RunCgroup | undefined;
  /** Set when the disk watchdog stopped the run, with why. */
  readonly diskStop: DiskStop | undefined;
}

/**
 * Starts `bash -c command` in a process group of its own, with exactly `options.env` plus a mark,
 * in a cgroup of its own where `options.limits` offers one. The cgroup holds everything the command
 * starts, so `signal` and the end of the run reach all of it; without one the mark lets `signal`
 * find what kept it. A background process outlives a worker killed with SIGKILL by at most
 * `backstopSeconds` (its process group; what left the group, at most until it ends by itself).
 */
export function spawnShell(command: string, options: ShellOptions): ShellRun {
  // No startup files: bash sources ~/.bashrc when its stdin is a socket (as Node's pipes are) and SHLVL is
  // below 2, which the allowlisted environment leaves unset; a command must not depend on the worker's dotfiles.
  const mark = randomBytes(12).toString('hex');
  const env = { ...options.env, [RUN_MARK_VARIABLE]: mark };
  const limits = options.limits;
  const shell = options.sandbox
    ? bubblewrapArgv(command, {
        workspace: options.cwd,
        env,
        settings: options.sandbox,
        layout: (layout ??= hostLayout()),
      })
    : ['bash', '--norc', '--noprofile', '-c', command];
  const bounded =
    options.backstopSeconds !== undefined && hasTimeoutCommand()
      ? ['timeout', '--kill-after=5s', `${Math.ceil(options.backstopSeconds)}s`, ...shell]
      : shell;
  let cgroup: RunCgroup | undefined;
  try {
    cgroup = limits?.cgroups?.create(mark, limits.processes);
  } catch (error) {
    throw new Error(`could not make the command's cgroup: ${(error as Error).message}`);
  }
  const argv = cgroup
    ? ['/bin/sh', '-c', JOIN_CGROUP, 'durable-agent-join', ...cgroup.procsFiles, '--', ...bounded]
    : bounded;
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: options.cwd,
    detached: true,
    env,
    stdio: [options.stdin, 'pipe', 'pipe'],
  });
  const signal = async (sig: NodeJS.Signals) => {
    killProcessGroup(child.pid, sig);
    if (cgroup) await cgroup.signal(sig);
    else await signalRun(mark, sig);
  };
  const killSync = () => {
    killProcessGroup(child.pid, 'SIGKILL');
    if (cgroup) cgroup.killSync();
    else signalRunsSync([mark], 'SIGKILL');
  };

  let diskStop: DiskStop | undefined;
  // Outside the sandbox a command also writes to its temporary directory, often another file system.
  const written = options.sandbox ? [options.cwd] : [options.cwd, options.env.TMPDIR || '/tmp'];
  const stopWatching = limits?.disk
    ? (limits.watchdog ?? diskWatchdog).watch(written, limits.disk, (stop) => {
        diskStop = stop;
        void signal('SIGKILL');
      })
    : () => undefined;

  // With a cgroup, the run is over when its cgroup is empty: SIGTERM, SIGKILL after the grace, then
  // the cgroup is removed. Without one, each sweep of the mark finds what is there at the time.
  let reaping: Promise<void> | undefined;
  const terminateNow = (): Promise<void> => {
    if (!cgroup) {
      return signal('SIGTERM').then(() => {
        setTimeout(() => void signal('SIGKILL'), KILL_GRACE_MS).unref();
      });
    }
    const run = cgroup;
    reaping ??= (async () => {
      await signal('SIGTERM');
      if (!(await run.waitEmpty(KILL_GRACE_MS))) await signal('SIGKILL');
      await run.remove();
    })();
    return reaping;
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
  }).then(
    async (exit) => {
      await terminateNow();
      stopWatching();
      return exit;
    },
    async (error: unknown) => {
      stopWatching();
      await cgroup?.remove();
      throw error;
    },
  );
  return {
    child,
    ended,
    signal,
    terminate: () => void terminateNow(),
    killSync,
    mark,
    cgroup,
    get diskStop() {
      return diskStop;
    },
  };
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
