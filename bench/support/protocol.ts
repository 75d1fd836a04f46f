/**
 * Messages between the bench runner and its worker processes (Node IPC), and the life of a worker
 * process. Shared with the peer's worker, so everything here is typed structurally: the peer's
 * Temporal 1.17 worker fits as well as the project's 1.24 one.
 */

export interface ToolReport {
  type: 'tool';
  event: 'start' | 'abort';
  tool: string;
  toolCallId: string;
  at: number;
}

export interface MemoryReport {
  type: 'memory';
  /** Resident set size now, in bytes. */
  rss: number;
  /** Largest resident set size sampled (every 100 ms) since the worker started or the last reset. */
  peakRss: number;
  heapUsed: number;
}

export type FromWorker = { type: 'ready' } | { type: 'failed'; message: string } | ToolReport | MemoryReport;

export type ToWorker = { type: 'memory'; resetPeak?: boolean } | { type: 'stop' };

/** Environment of a worker process. */
export interface WorkerEnv {
  BENCH_TEMPORAL_ADDRESS: string;
  BENCH_TASK_QUEUE: string;
  BENCH_MODEL_URL: string;
  /** The prebuilt workflow bundle (the peer's worker writes it there first if it is missing). */
  BENCH_WORKFLOW_BUNDLE: string;
  /** Fleet model limits, read as a worker reads them (`modelLimiterFromEnv`); none when absent. */
  AGENT_MODEL_MAX_CONCURRENT?: string;
  /** `1`: the worker offers `sessions_spawn` too. */
  BENCH_SUB_AGENTS?: string;
}

const send = (message: FromWorker) => process.send?.(message);

/** Tells the runner that a tool started or saw its abort signal (for the control-latency bench). */
export function reportTool(report: Omit<ToolReport, 'type'>): void {
  send({ type: 'tool', ...report });
}

/**
 * Runs a worker process's worker: tells the runner it is ready, answers its memory requests, and
 * shuts the worker down when told to stop or when the runner goes away.
 */
export async function serveRunner(
  worker: { run(): Promise<void>; shutdown(): void },
  connection: { close(): Promise<void> },
): Promise<void> {
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    worker.shutdown();
  };
  let peakRss = process.memoryUsage.rss();
  setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 100).unref();
  process.on('message', (message: ToWorker) => {
    if (message.type === 'stop') {
      stop();
      return;
    }
    const { rss, heapUsed } = process.memoryUsage();
    peakRss = Math.max(peakRss, rss);
    send({ type: 'memory', rss, peakRss, heapUsed });
    if (message.resetPeak) peakRss = rss;
  });
  process.on('disconnect', stop);
  const running = worker.run();
  send({ type: 'ready' });
  await running;
  await connection.close();
  process.exit(0);
}

/** Reports a worker process's failure to start to the runner, and exits. */
export function failWorker(error: unknown): never {
  send({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exit(1);
}
