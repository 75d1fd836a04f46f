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

/**
 * A request to a peer's service process whose engine is driven from inside it (DBOS, LangGraph):
 * `open` a conversation, run its next `turn` (resolved once the turn is durably done).
 */
export interface ServiceCall {
  type: 'call';
  callId: number;
  method: 'open' | 'turn';
  conversationId: string;
  text?: string;
}

export interface ServiceReply {
  type: 'reply';
  callId: number;
  error?: string;
}

export type FromWorker =
  { type: 'ready' } | { type: 'failed'; message: string } | ToolReport | MemoryReport | ServiceReply;

export type ToWorker = { type: 'memory'; resetPeak?: boolean } | { type: 'stop' } | ServiceCall;

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
  /** `1`: the worker offers the built-in tools too, as `durable-agent worker` does. */
  BENCH_BUILTIN_TOOLS?: string;
  /** What the worker takes from its task queue: `all` (default), `workflows` or `activities`. */
  BENCH_SERVES?: string;
  /** `1`: the worker serves its push endpoint on a loopback port. */
  BENCH_LIVE_ENDPOINT?: string;
  /** `1`: a workflow task delivering a directive with this process's `stallTaskOf` stalls (bench 8). */
  BENCH_STALL_MARKED_TASKS?: string;
  /** `1`: conversations keep their search attributes (status, agent, last activity), as the console lists them by. */
  BENCH_SEARCH_ATTRIBUTES?: string;
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
  answerRunner(stop);
  const running = worker.run();
  send({ type: 'ready' });
  await running;
  await connection.close();
  process.exit(0);
}

/**
 * Answers the runner's memory requests (RSS sampled every 100 ms for the peak), hands its calls to
 * `call`, and calls `stop` when told to stop or when the runner goes away.
 */
function answerRunner(
  stop: () => void,
  call: (message: ServiceCall) => Promise<void> = () => Promise.reject(new Error('no calls here')),
): void {
  let peakRss = process.memoryUsage.rss();
  setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 100).unref();
  process.on('message', (message: ToWorker) => {
    if (message.type === 'stop') {
      stop();
      return;
    }
    if (message.type === 'call') {
      call(message).then(
        () => send({ type: 'reply', callId: message.callId }),
        (error: unknown) =>
          send({
            type: 'reply',
            callId: message.callId,
            error: error instanceof Error ? (error.stack ?? error.message) : String(error),
          }),
      );
      return;
    }
    const { rss, heapUsed } = process.memoryUsage();
    peakRss = Math.max(peakRss, rss);
    send({ type: 'memory', rss, peakRss, heapUsed });
    if (message.resetPeak) peakRss = rss;
  });
  process.on('disconnect', stop);
}

/**
 * Runs a peer's service process (an engine other than Temporal): tells the runner it is ready once
 * `start` resolves, runs the runner's calls on `service`, and exits after `service.stop` when told to stop.
 */
export async function servePeer(service: {
  start(): Promise<void>;
  open(conversationId: string): Promise<void>;
  turn(conversationId: string, text: string): Promise<void>;
  stop(): Promise<void>;
}): Promise<void> {
  let stopping = false;
  answerRunner(
    () => {
      if (stopping) return;
      stopping = true;
      void service.stop().finally(() => process.exit(0));
    },
    (message) =>
      message.method === 'open'
        ? service.open(message.conversationId)
        : service.turn(message.conversationId, message.text ?? ''),
  );
  await service.start();
  send({ type: 'ready' });
}

/** Reports a worker process's failure to start to the runner, and exits. */
export function failWorker(error: unknown): never {
  send({ type: 'failed', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exit(1);
}
