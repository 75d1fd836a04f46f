import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs';
import { readFile, rmdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type CgroupLayout, readCgroupLayout } from './cgroup-layout';

/**
 * AGENT_EXEC_CGROUP: `auto` finds a place under this worker's own cgroups and falls back to the
 * environment mark where there is none; `off` uses the mark only; an absolute path names the cgroup
 * (v2, or the v1 pids hierarchy) to make the worker's cgroup under, and must work.
 */
export type CgroupSetting = 'auto' | 'off' | (string & {});

/** Rounds of SIGKILL to a cgroup's processes where there is no cgroup.kill; the pids limit bounds what each round finds. */
const KILL_ROUNDS = 200;
const POLL_MS = 10;
/** How long an emptied run cgroup may take to lose its last exiting processes before it is left for the exit sweep. */
const EMPTY_WAIT_MS = 3_000;
const PARENT_PREFIX = 'durable-agent-';

interface Hierarchy {
  /** The worker's parent cgroup directory in this hierarchy. */
  dir: string;
  kind: 'v2' | 'v1';
  /** Whether this hierarchy's run cgroups get `pids.max`. */
  limits: boolean;
}

/**
 * The cgroup a command runs in, one directory per hierarchy used. The command is placed in it
 * before it runs (see `procsFiles`), so everything it starts is in it too, whatever it does with
 * its session, environment or parents; only writing to the cgroup fs itself moves a process out,
 * which a sandboxed command cannot (no /sys, its own cgroup namespace, no capabilities).
 */
export class RunCgroup {
  constructor(
    private readonly dirs: readonly string[],
    /** Where `cgroup.kill` exists (v2, Linux 5.14+): one write kills everything, forks included. */
    private readonly killFile: string | undefined,
    private readonly owner: CommandCgroups,
  ) {}

  /** The `cgroup.procs` files a command writes its pid to before it runs. */
  get procsFiles(): string[] {
    return this.dirs.map((dir) => path.join(dir, 'cgroup.procs'));
  }

  /** The pids in the cgroup now. */
  async members(): Promise<number[]> {
    const lists = await Promise.all(this.procsFiles.map((file) => readFile(file, 'utf8').catch(() => '')));
    return [...new Set(lists.flatMap(pidsOf))];
  }

  /** Sends `signal` to every process in the cgroup (SIGKILL: the whole cgroup, forks included). */
  async signal(signal: NodeJS.Signals): Promise<void> {
    if (signal === 'SIGKILL') return this.kill();
    for (const pid of await this.members()) send(pid, signal);
  }

  /** Kills every process in the cgroup: `cgroup.kill`, else SIGKILL to its members until none is left. */
  async kill(): Promise<void> {
    if (this.killFile && (await succeeds(writeFile(this.killFile, '1')))) return;
    for (let round = 0; round < KILL_ROUNDS; round++) {
      const pids = await this.members();
      if (pids.length === 0) return;
      for (const pid of pids) send(pid, 'SIGKILL');
      await sleep(POLL_MS);
    }
  }

  /** `kill` with blocking calls, for an exit handler. */
  killSync(): void {
    if (this.killFile && attemptSync(() => writeFileSync(this.killFile!, '1'))) return;
    for (let round = 0; round < KILL_ROUNDS; round++) {
      const pids = [...new Set(this.procsFiles.flatMap((file) => pidsOf(readOrEmpty(file))))];
      if (pids.length === 0) return;
      for (const pid of pids) send(pid, 'SIGKILL');
      sleepSync(POLL_MS);
    }
  }

  /** Waits up to `withinMs` for the cgroup to hold no process; true when it is empty. */
  async waitEmpty(withinMs: number): Promise<boolean> {
    const deadline = Date.now() + withinMs;
    for (;;) {
      if ((await this.members()).length === 0) return true;
      if (Date.now() >= deadline) return false;
      await sleep(POLL_MS);
    }
  }

  /**
   * Removes the cgroup once it is empty (a cgroup with processes cannot be removed); one that does
   * not empty in time is left for the sweep when the worker exits.
   */
  async remove(): Promise<void> {
    if (!(await this.waitEmpty(EMPTY_WAIT_MS))) return;
    for (const dir of this.dirs) await rmdir(dir).catch(() => undefined);
    if (this.dirs.every((dir) => !existsSync(dir))) this.owner.forget(this);
  }

  /** One attempt at `remove` with blocking calls, for an exit handler; false while a directory is still there. */
  removeSync(): boolean {
    for (const dir of this.dirs) attemptSync(() => rmdirSync(dir));
    return this.dirs.every((dir) => !existsSync(dir));
  }
}

/**
 * The cgroups this worker makes for commands: a parent `durable-agent-<pid>` under its own cgroup
 * in each hierarchy used, and one child per command. The process limit is `pids.max` of the v2
 * pids controller when it can be enabled there, else of the v1 pids hierarchy. The parent exists
 * only while commands run (made with the first, removed with the last), so a worker killed while
 * idle leaves nothing behind; when the worker process exits, whatever is still in its cgroups is
 * killed and they are removed.
 */
export class CommandCgroups {
  private readonly runs = new Set<RunCgroup>();

  private constructor(
    private readonly hierarchies: readonly Hierarchy[],
    /** Where `cgroup.kill` exists in the v2 hierarchy. */
    private readonly canKill: boolean,
  ) {
    removeParents(hierarchies);
    process.once('exit', () => this.closeSync());
  }

  /**
   * Makes the worker's parent cgroups. `setting` is `auto` (under this process's own cgroups) or
   * the path of a cgroup to make them under, which must give a process limit. Returns why not when
   * no cgroup can be used.
   */
  static open(
    setting: string,
    layout: CgroupLayout = readCgroupLayout(),
  ): CommandCgroups | { unavailable: string } {
    const explicit = setting !== 'auto';
    const bases: Array<{ base: string; kind: 'v2' | 'v1' }> = explicit
      ? [{ base: setting, kind: existsSync(path.join(setting, 'cgroup.controllers')) ? 'v2' : 'v1' }]
      : [
          ...(layout.v2 ? [{ base: layout.v2, kind: 'v2' as const }] : []),
          ...(layout.v1Pids ? [{ base: layout.v1Pids, kind: 'v1' as const }] : []),
        ];
    if (bases.length === 0) return { unavailable: 'no cgroup v2 or v1 pids hierarchy is mounted here' };
    const tried: string[] = [];
    const hierarchies: Hierarchy[] = [];
    for (const { base, kind } of bases) {
      const made = kind === 'v2' ? parentV2(base) : parentV1(base);
      if ('reason' in made) tried.push(made.reason);
      else hierarchies.push(made);
    }
    const v2 = hierarchies.find((hierarchy) => hierarchy.kind === 'v2');
    // With the v2 pids controller in place, the v1 hierarchy adds nothing.
    const used = v2?.limits ? [v2] : hierarchies;
    for (const hierarchy of hierarchies) {
      if (!used.includes(hierarchy)) attemptSync(() => rmdirSync(hierarchy.dir));
    }
    if (explicit && !used.some((hierarchy) => hierarchy.limits)) {
      for (const hierarchy of used) attemptSync(() => rmdirSync(hierarchy.dir));
      tried.push(
        `the pids controller cannot be enabled under ${setting} (a cgroup other than the root that holds processes cannot enable controllers for its children)`,
      );
    }
    if (tried.length && (explicit || used.length === 0)) return { unavailable: tried.join('; ') };
    const canKill = v2 !== undefined && used.includes(v2) && existsSync(path.join(v2.dir, 'cgroup.kill'));
    return new CommandCgroups(used, canKill);
  }

  /** Whether a `pids.max` applies to every run cgroup. */
  get limitsProcesses(): boolean {
    return this.hierarchies.some((hierarchy) => hierarchy.limits);
  }

  /** One line for the worker's start: where commands run, what limits them, how they are killed. */
  describe(): string {
    const where = this.hierarchies.map((hierarchy) => hierarchy.dir).join(' and ');
    const limit = this.hierarchies.find((hierarchy) => hierarchy.limits);
    const limitText = limit
      ? `process limit: pids.max (${limit.kind === 'v2' ? 'cgroup v2' : 'cgroup v1'} pids controller)`
      : 'no pids controller can be enabled, so no process limit from the cgroup';
    const kill = this.canKill ? 'cgroup.kill' : 'SIGKILL to cgroup.procs until empty';
    return `commands run in a cgroup each under ${where}; ${limitText}; killed by ${kill}`;
  }

  /** A cgroup for one command, named `name`, with at most `processes` tasks; throws when it cannot be made. */
  create(name: string, processes: number): RunCgroup {
    if (this.runs.size === 0) makeParents(this.hierarchies);
    const dirs: string[] = [];
    try {
      for (const hierarchy of this.hierarchies) {
        const dir = path.join(hierarchy.dir, name);
        mkdirSync(dir);
        dirs.push(dir);
        if (hierarchy.limits) writeFileSync(path.join(dir, 'pids.max'), String(processes));
      }
    } catch (error) {
      for (const dir of dirs) attemptSync(() => rmdirSync(dir));
      if (this.runs.size === 0) removeParents(this.hierarchies);
      throw error;
    }
    const v2 = this.hierarchies.findIndex((hierarchy) => hierarchy.kind === 'v2');
    const run = new RunCgroup(
      dirs,
      this.canKill && v2 !== -1 ? path.join(dirs[v2]!, 'cgroup.kill') : undefined,
      this,
    );
    this.runs.add(run);
    return run;
  }

  /** Called by a run cgroup once removed; the parents go with the last one. */
  forget(run: RunCgroup): void {
    this.runs.delete(run);
    if (this.runs.size === 0) removeParents(this.hierarchies);
  }

  /** Kills what is left in every run cgroup and removes them and the parents: the worker is exiting. */
  closeSync(): void {
    for (const run of this.runs) run.killSync();
    const deadline = Date.now() + EMPTY_WAIT_MS;
    while (this.runs.size > 0 && Date.now() < deadline) {
      for (const run of this.runs) if (run.removeSync()) this.runs.delete(run);
      if (this.runs.size > 0) sleepSync(POLL_MS);
    }
    removeParents(this.hierarchies);
  }
}

/** Makes the parents again (a v2 one with the pids controller for its children where it had it). */
function makeParents(hierarchies: readonly Hierarchy[]): void {
  for (const hierarchy of hierarchies) {
    try {
      mkdirSync(hierarchy.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    if (hierarchy.kind === 'v2' && hierarchy.limits) {
      const control = path.join(hierarchy.dir, 'cgroup.subtree_control');
      if (!readOrEmpty(control).split(/\s+/).includes('pids')) writeFileSync(control, '+pids');
    }
  }
}

function removeParents(hierarchies: readonly Hierarchy[]): void {
  for (const hierarchy of hierarchies) attemptSync(() => rmdirSync(hierarchy.dir));
}

/** What AGENT_EXEC_CGROUP gave this process: the cgroups, or why there are none. */
export type CgroupChoice = { cgroups: CommandCgroups } | { cgroups?: undefined; unavailable: string };

const chosen = new Map<string, CgroupChoice>();

/**
 * The command cgroups for `setting`, made once per worker process and shared by every exec tool in
 * it. `auto` falls back (the caller keeps the environment mark); a path that cannot be used throws,
 * so a worker told where to put commands does not start without it.
 */
export function commandCgroupsFor(setting: CgroupSetting): CgroupChoice {
  if (setting === 'off') return { unavailable: 'AGENT_EXEC_CGROUP=off' };
  let choice = chosen.get(setting);
  if (!choice) {
    const opened = CommandCgroups.open(setting);
    choice = opened instanceof CommandCgroups ? { cgroups: opened } : { unavailable: opened.unavailable };
    chosen.set(setting, choice);
  }
  if (setting !== 'auto' && !choice.cgroups)
    throw new Error(`AGENT_EXEC_CGROUP=${setting} cannot be used: ${choice.unavailable}`);
  return choice;
}

/**
 * Whether a command's process limit binds, and one line saying how: a cgroup's `pids.max` binds
 * everyone; `ulimit -u` (the sandbox's other limit) binds only a worker that is not root.
 */
export function processLimitStatus(
  choice: CgroupChoice,
  uid: number | undefined = process.getuid?.(),
): { binds: boolean; text: string } {
  const ulimit =
    uid === 0
      ? 'the only process limit left is ulimit -u in sandbox mode, which the kernel does not apply to root'
      : 'the only process limit left is ulimit -u in sandbox mode (it binds: the worker is not root), and none in full or safe-bin mode';
  if (choice.cgroups?.limitsProcesses) return { binds: true, text: choice.cgroups.describe() };
  if (choice.cgroups) return { binds: uid !== 0, text: `${choice.cgroups.describe()}; ${ulimit}` };
  return {
    binds: uid !== 0,
    text: `no cgroup for commands (${choice.unavailable}): processes a command leaves are found by an environment mark, which a command can drop (env -i) to outlive it outside the sandbox; ${ulimit}`,
  };
}

/**
 * The worker's parent in the v2 hierarchy, under `base`. The pids controller is enabled on the way
 * when it can be: `base` must have it enabled for its children already, or accept `+pids` (which
 * the kernel refuses to a cgroup other than the root that has processes of its own, as the worker's
 * usually has). Without it the cgroup still gives membership and `cgroup.kill`.
 */
function parentV2(base: string): Hierarchy | { reason: string } {
  const controllers = readOrEmpty(path.join(base, 'cgroup.controllers')).split(/\s+/);
  let pids = false;
  if (controllers.includes('pids')) {
    const control = path.join(base, 'cgroup.subtree_control');
    pids =
      readOrEmpty(control).split(/\s+/).includes('pids') ||
      attemptSync(() => writeFileSync(control, '+pids'));
  }
  const dir = path.join(base, `${PARENT_PREFIX}${process.pid}`);
  const made = makeParent(dir, 'v2');
  if (made) return { reason: made };
  if (pids) pids = attemptSync(() => writeFileSync(path.join(dir, 'cgroup.subtree_control'), '+pids'));
  return { dir, kind: 'v2', limits: pids };
}

/** The worker's parent in the v1 pids hierarchy, under `base`. */
function parentV1(base: string): Hierarchy | { reason: string } {
  const dir = path.join(base, `${PARENT_PREFIX}${process.pid}`);
  const made = makeParent(dir, 'v1');
  if (made) return { reason: made };
  if (!existsSync(path.join(dir, 'pids.max'))) {
    attemptSync(() => rmdirSync(dir));
    return { reason: `${base} is not in a pids hierarchy` };
  }
  return { dir, kind: 'v1', limits: true };
}

/**
 * Makes the parent (reusing one a dead process of the same pid left), removes what dead workers
 * left empty beside it, and checks that a process can be moved into a child. Returns why not.
 */
function makeParent(dir: string, kind: 'v2' | 'v1'): string | undefined {
  removeStaleSiblings(path.dirname(dir));
  try {
    mkdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST')
      return `cannot make ${kind} cgroup ${dir}: ${(error as Error).message}`;
  }
  const probe = path.join(dir, 'probe');
  try {
    mkdirSync(probe);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      attemptSync(() => rmdirSync(dir));
      return `cannot make a cgroup under ${dir}: ${(error as Error).message}`;
    }
  }
  const moved = spawnSync('/bin/sh', ['-c', 'echo $$ > "$1"', 'probe', path.join(probe, 'cgroup.procs')], {
    encoding: 'utf8',
    env: {},
    timeout: 5_000,
  });
  attemptSync(() => rmdirSync(probe));
  if (moved.status !== 0) {
    attemptSync(() => rmdirSync(dir));
    return `cannot move a process into ${kind} cgroup ${probe}: ${(moved.stderr || moved.error?.message || `exit ${moved.status}`).trim()}`;
  }
  return undefined;
}

/**
 * Removes `durable-agent-<pid>` cgroups of workers that are gone (killed before their exit handler
 * ran), where they are empty; a cgroup still holding processes is left alone.
 */
function removeStaleSiblings(base: string): void {
  let names: string[];
  try {
    names = readdirSync(base).filter((name) => name.startsWith(PARENT_PREFIX));
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(name.slice(PARENT_PREFIX.length));
    if (!Number.isInteger(pid) || pid === process.pid || isAlive(pid)) continue;
    const dir = path.join(base, name);
    let children: string[] = [];
    attemptSync(() => {
      children = readdirSync(dir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name);
    });
    for (const child of children) attemptSync(() => rmdirSync(path.join(dir, child)));
    attemptSync(() => rmdirSync(dir));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const pidsOf = (text: string): number[] =>
  text
    .split('\n')
    .filter((line) => /^\d+$/.test(line))
    .map(Number);

function send(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // Already gone.
  }
}

function readOrEmpty(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

const succeeds = (promise: Promise<unknown>): Promise<boolean> =>
  promise.then(
    () => true,
    () => false,
  );

function attemptSync(action: () => void): boolean {
  try {
    action();
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
