import { randomBytes } from 'node:crypto';
import { WORKER_TAG_LENGTH, workerTagOf } from '../../shared/worker-bound';
import type { SandboxSettings } from './bubblewrap';
import type { DiskStop } from './disk-watchdog';
import { type OutputRead, PollableOutput } from './process-output';
import { signalRunsSync } from './process-tree';
import { type RunLimits, type ShellRun, killProcessGroup, spawnShell } from './shell-process';
import { ToolError } from '../tool-error';

export interface BackgroundProcessLimits {
  /** Running at once per conversation. Default 8. */
  perConversation: number;
  /** Running at once in this worker, all conversations together. Default 64. */
  perWorker: number;
  /** Finished processes kept per conversation for `list` and a last `poll`; the oldest go first. Default 16. */
  finishedKept: number;
  /** Newest output kept per process; older output is dropped and a poll says how much. Default 1 MiB. */
  outputBytes: number;
}

const DEFAULT_LIMITS: BackgroundProcessLimits = {
  perConversation: 8,
  perWorker: 64,
  finishedKept: 16,
  outputBytes: 1024 * 1024,
};
const KILL_GRACE_MS = 2_000;
/**
 * How long `kill` waits beyond the grace for the process and what it left to be gone (its cgroup
 * emptied and removed) before it answers `running`: seconds on a loaded machine.
 */
const KILL_REAP_MS = 5_000;
/** How much later than its own timeout the process kills itself, should this worker be gone by then. */
const BACKSTOP_EXTRA_S = 30;
const COMMAND_SHOWN_CHARS = 200;
const WRITE_FLUSH_WAIT_MS = 5_000;

export interface ProcessSummary {
  id: string;
  pid: number | undefined;
  command: string;
  status: 'running' | 'exited';
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** Why this worker stopped it, if it did: its timeout, a kill asked for, or the disk watchdog. */
  stoppedBy?: 'timeout' | 'kill' | 'disk';
  /** What the disk watchdog found, when it stopped the process. */
  diskStop?: DiskStop;
  startedAt: number;
  endedAt?: number;
  outputBytes: number;
  unreadBytes: number;
}

interface Entry {
  id: string;
  conversationId: string;
  toolCallId: string;
  command: string;
  run: ShellRun;
  startedAt: number;
  output: PollableOutput;
  ended?: { code: number | null; signal: NodeJS.Signals | null; at: number };
  stoppedBy?: 'timeout' | 'kill' | 'disk';
  timer: NodeJS.Timeout;
  /** Called on new output and when the process ends. */
  waiters: Set<() => void>;
}

/**
 * The background processes `exec` started in this worker, each belonging to the conversation that
 * started it: only that conversation sees, polls, writes to or kills it. They live in this worker
 * process: when it stops they are killed, and when it dies the table is lost with it (the processes
 * die at their next output, for lack of a reader, or at their timeout). Ids carry this table's
 * instance tag, so a call that reaches another worker, or this one after a restart, is told so.
 */
export class BackgroundProcesses {
  /** Ends every id; the worker serving this table polls a task queue of its own for it (shared/worker-bound). */
  readonly instance = randomBytes(WORKER_TAG_LENGTH / 2).toString('hex');
  private readonly limits: BackgroundProcessLimits;
  /** By conversation and id: ids count per conversation, so two conversations both have a `p1`. */
  private readonly entries = new Map<string, Entry>();
  private readonly startedByToolCall = new Map<string, string>();
  private readonly counters = new Map<string, number>();

  constructor(limits: Partial<BackgroundProcessLimits> = {}) {
    this.limits = { ...DEFAULT_LIMITS, ...limits };
  }

  /**
   * Starts `command` in the background and returns at once. The tool call id is the idempotency
   * key: a second start for the same call returns the process the first one started.
   */
  start(params: {
    conversationId: string;
    toolCallId: string;
    command: string;
    cwd: string;
    /** The command's whole environment; see `childEnvironment`. */
    env: Readonly<Record<string, string>>;
    timeoutSeconds: number;
    /** Run it inside the bubblewrap sandbox, confined to `cwd`. */
    sandbox?: SandboxSettings;
    /** Its cgroup, process limit and disk limits; none when absent. */
    limits?: RunLimits;
  }): ProcessSummary & { alreadyStarted: boolean } {
    const key = `${params.conversationId}\0${params.toolCallId}`;
    const existing = this.startedByToolCall.get(key);
    const existingEntry =
      existing === undefined ? undefined : this.entries.get(entryKey(params.conversationId, existing));
    if (existingEntry) return { ...summaryOf(existingEntry), alreadyStarted: true };

    const running = [...this.entries.values()].filter((entry) => !entry.ended);
    if (
      running.filter((entry) => entry.conversationId === params.conversationId).length >=
      this.limits.perConversation
    ) {
      throw new ToolError(
        'ExecutionFailed',
        `this conversation already has ${this.limits.perConversation} background processes running; kill one first`,
      );
    }
    if (running.length >= this.limits.perWorker) {
      throw new ToolError(
        'ExecutionFailed',
        `this worker already runs ${this.limits.perWorker} background processes; try again later`,
      );
    }

    const number = (this.counters.get(params.conversationId) ?? 0) + 1;
    this.counters.set(params.conversationId, number);
    const id = `p${number}-${this.instance}`;
    const run = spawnShell(params.command, {
      cwd: params.cwd,
      stdin: 'pipe',
      env: params.env,
      backstopSeconds: params.timeoutSeconds + BACKSTOP_EXTRA_S,
      ...(params.sandbox ? { sandbox: params.sandbox } : {}),
      ...(params.limits ? { limits: params.limits } : {}),
    });
    const entry: Entry = {
      id,
      conversationId: params.conversationId,
      toolCallId: params.toolCallId,
      command: params.command,
      run,
      startedAt: Date.now(),
      output: new PollableOutput(this.limits.outputBytes),
      timer: setTimeout(() => this.stop(entry, 'timeout', 'SIGTERM'), params.timeoutSeconds * 1_000),
      waiters: new Set(),
    };
    entry.timer.unref();
    const notify = () => {
      for (const waiter of entry.waiters) waiter();
    };
    const onOutput = (chunk: Buffer) => {
      entry.output.push(chunk);
      notify();
    };
    run.child.stdout!.on('data', onOutput);
    run.child.stderr!.on('data', onOutput);
    // Writing to a process that has exited fails on the stream; the write call reports it.
    run.child.stdin!.on('error', () => undefined);
    const end = (code: number | null, signal: NodeJS.Signals | null) => {
      if (entry.ended) return;
      clearTimeout(entry.timer);
      if (run.diskStop) entry.stoppedBy = 'disk';
      entry.ended = { code, signal, at: Date.now() };
      this.forgetOldFinished(entry.conversationId);
      notify();
    };
    // It ends at bash's exit (plus a short drain), and what it left running is terminated then.
    run.ended.then(
      (exit) => end(exit.code, exit.signal),
      (error: Error) => {
        entry.output.push(Buffer.from(`could not start bash: ${error.message}\n`));
        end(null, null);
      },
    );
    this.entries.set(entryKey(params.conversationId, id), entry);
    this.startedByToolCall.set(key, id);
    trackForExit(this);
    return { ...summaryOf(entry), alreadyStarted: false };
  }

  /** The conversation's processes, oldest first. */
  list(conversationId: string): ProcessSummary[] {
    return [...this.entries.values()]
      .filter((entry) => entry.conversationId === conversationId)
      .map(summaryOf);
  }

  /**
   * Output since the previous poll (at most `maxBytes`) and the status. With `waitMs`, waits that
   * long at most for new output or the end, so a model need not poll in a tight loop.
   */
  async poll(
    conversationId: string,
    id: string,
    options: { waitMs: number; maxBytes: number; signal?: AbortSignal },
  ): Promise<{ summary: ProcessSummary; output: OutputRead }> {
    const entry = this.entryOf(conversationId, id);
    if (entry.output.unread === 0 && !entry.ended && options.waitMs > 0) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          entry.waiters.delete(done);
          options.signal?.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, options.waitMs);
        entry.waiters.add(done);
        options.signal?.addEventListener('abort', done, { once: true });
      });
    }
    const output = entry.output.read(options.maxBytes);
    return { summary: summaryOf(entry), output };
  }

  /**
   * Writes `input` to the process's stdin, then closes stdin when `close`. `flushed` is false when
   * the process has not taken the input within a few seconds (it is queued, not lost).
   */
  async write(
    conversationId: string,
    id: string,
    input: string,
    close: boolean,
  ): Promise<{ bytes: number; flushed: boolean }> {
    const entry = this.entryOf(conversationId, id);
    const stdin = entry.run.child.stdin!;
    if (entry.ended) throw new ToolError('ExecutionFailed', `process ${id} has already exited`);
    if (!stdin.writable) throw new ToolError('ExecutionFailed', `the stdin of process ${id} is closed`);
    const flushed = await new Promise<boolean>((resolve, reject) => {
      const timer = setTimeout(() => resolve(false), WRITE_FLUSH_WAIT_MS);
      stdin.write(input, (error) => {
        clearTimeout(timer);
        if (error)
          reject(new ToolError('ExecutionFailed', `could not write to process ${id}: ${error.message}`));
        else resolve(true);
      });
    });
    if (close) stdin.end();
    return { bytes: Buffer.byteLength(input), flushed };
  }

  /**
   * Signals every process the command started, also those that left its group or session (SIGKILL
   * follows a gentler signal if it is ignored), and waits briefly for the end.
   */
  async kill(conversationId: string, id: string, signal: NodeJS.Signals): Promise<ProcessSummary> {
    const entry = this.entryOf(conversationId, id);
    if (!entry.ended) {
      this.stop(entry, 'kill', signal);
      await new Promise<void>((resolve) => {
        const done = () => {
          if (!entry.ended) return;
          clearTimeout(timer);
          entry.waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(() => {
          entry.waiters.delete(done);
          resolve();
        }, KILL_GRACE_MS + KILL_REAP_MS);
        entry.waiters.add(done);
        done();
      });
    }
    return summaryOf(entry);
  }

  /**
   * Kills every process of every conversation, and what finished ones left running: the worker is
   * stopping. Synchronous, so it works in an exit handler.
   */
  killAll(): void {
    const entries = [...this.entries.values()];
    for (const entry of entries) {
      if (!entry.ended) killProcessGroup(entry.run.child.pid, 'SIGKILL');
      entry.run.cgroup?.killSync();
    }
    // Runs without a cgroup are found by their marks, all in one sweep of /proc.
    signalRunsSync(
      entries.filter((entry) => !entry.run.cgroup).map((entry) => entry.run.mark),
      'SIGKILL',
    );
  }

  private stop(entry: Entry, reason: 'timeout' | 'kill', signal: NodeJS.Signals): void {
    entry.stoppedBy ??= reason;
    void entry.run.signal(signal);
    if (signal !== 'SIGKILL') {
      setTimeout(() => {
        if (!entry.ended) void entry.run.signal('SIGKILL');
      }, KILL_GRACE_MS).unref();
    }
  }

  private entryOf(conversationId: string, id: string): Entry {
    const entry = this.entries.get(entryKey(conversationId, id));
    if (entry) return entry;
    const tag = workerTagOf(id);
    if (tag !== undefined && tag !== this.instance) {
      throw new ToolError(
        'FileNotFound',
        `process ${id} was started by another worker process (this worker restarted, or another worker of the task queue took this call); background processes live only in the worker that started them`,
      );
    }
    throw new ToolError(
      'FileNotFound',
      `no background process ${id} in this conversation (see action "list")`,
    );
  }

  private forgetOldFinished(conversationId: string): void {
    const finished = [...this.entries.values()]
      .filter((entry) => entry.conversationId === conversationId && entry.ended)
      .sort((a, b) => a.ended!.at - b.ended!.at);
    for (const entry of finished.slice(0, Math.max(0, finished.length - this.limits.finishedKept))) {
      this.entries.delete(entryKey(entry.conversationId, entry.id));
      this.startedByToolCall.delete(`${entry.conversationId}\0${entry.toolCallId}`);
    }
  }
}

const entryKey = (conversationId: string, id: string) => `${conversationId}\0${id}`;

function summaryOf(entry: Entry): ProcessSummary {
  return {
    id: entry.id,
    pid: entry.run.child.pid,
    command: entry.command.slice(0, COMMAND_SHOWN_CHARS),
    status: entry.ended ? 'exited' : 'running',
    exitCode: entry.ended?.code ?? null,
    signal: entry.ended?.signal ?? null,
    ...(entry.stoppedBy ? { stoppedBy: entry.stoppedBy } : {}),
    ...(entry.run.diskStop ? { diskStop: entry.run.diskStop } : {}),
    startedAt: entry.startedAt,
    ...(entry.ended ? { endedAt: entry.ended.at } : {}),
    outputBytes: entry.output.total,
    unreadBytes: entry.output.unread,
  };
}

/** Tables with processes, killed when the worker process exits; one listener for all of them. */
const liveTables = new Set<BackgroundProcesses>();
function trackForExit(table: BackgroundProcesses): void {
  if (liveTables.size === 0) {
    process.once('exit', () => {
      for (const live of liveTables) live.killAll();
    });
  }
  liveTables.add(table);
}
