import { type ChildProcess, fork } from 'node:child_process';
import path from 'node:path';
import type { FromWorker, MemoryReport, ServiceCall, ToWorker, ToolReport, WorkerEnv } from './protocol';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');

export interface WorkerProcess {
  pid: number;
  memory(resetPeak?: boolean): Promise<MemoryReport>;
  /** A call to a peer's service process (servePeer), resolved with its reply. */
  call(message: Omit<ServiceCall, 'type' | 'callId'>): Promise<void>;
  /** Every tool report from now on. */
  onTool(listener: (report: ToolReport) => void): () => void;
  stop(): Promise<void>;
  /** SIGKILL, as a crash: resolves once the process is gone. */
  kill(): Promise<void>;
}

/**
 * Starts a worker in its own Node process (TypeScript through tsx), so its memory is its own and
 * the runner's client work does not share its event loop. Resolves once the worker polls (a peer's
 * service: once it serves). `node`: the Node binary to run it on (default: this process's).
 */
export async function startWorkerProcess(
  entry: string,
  env: WorkerEnv | Record<string, string>,
  node?: string,
): Promise<WorkerProcess> {
  const child: ChildProcess = fork(entry, [], {
    cwd: REPO_ROOT,
    ...(node ? { execPath: node } : {}),
    // BENCH_WORKER_NODE_OPTIONS adds Node flags to worker processes, e.g. `--cpu-prof` to profile them.
    execArgv: [
      '--import',
      'tsx',
      ...(process.env.BENCH_WORKER_NODE_OPTIONS ?? '').split(' ').filter(Boolean),
    ],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  // The worker's own output is kept (the last 8 KB) and shown only if it fails.
  let stderr = '';
  const keep = (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-8_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const toolListeners = new Set<(report: ToolReport) => void>();
  const memoryWaiters: Array<(report: MemoryReport) => void> = [];
  const callWaiters = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  let nextCallId = 0;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`worker ${entry} not ready after 120 s\n${stderr}`)),
      120_000,
    );
    child.on('message', (message: FromWorker) => {
      switch (message.type) {
        case 'ready':
          clearTimeout(timer);
          resolve();
          break;
        case 'failed':
          clearTimeout(timer);
          reject(new Error(`worker ${entry} failed: ${message.message}\n${stderr}`));
          break;
        case 'tool':
          for (const listener of toolListeners) listener(message);
          break;
        case 'memory':
          memoryWaiters.shift()?.(message);
          break;
        case 'reply': {
          const waiter = callWaiters.get(message.callId);
          callWaiters.delete(message.callId);
          if (message.error) waiter?.reject(new Error(message.error));
          else waiter?.resolve();
          break;
        }
      }
    });
    void exited.then((code) => {
      for (const waiter of callWaiters.values()) waiter.reject(new Error(`worker exited with ${code}`));
      callWaiters.clear();
      clearTimeout(timer);
      reject(new Error(`worker ${entry} exited with ${code}\n${stderr}`));
    });
  });

  const sendToChild = (message: ToWorker) => child.send(message);
  return {
    pid: child.pid!,
    memory(resetPeak = false) {
      return new Promise((resolve) => {
        memoryWaiters.push(resolve);
        sendToChild({ type: 'memory', resetPeak });
      });
    },
    call(message) {
      const callId = ++nextCallId;
      return new Promise((resolve, reject) => {
        if (child.exitCode !== null || child.signalCode !== null) {
          reject(new Error(`worker ${entry} is not running`));
          return;
        }
        callWaiters.set(callId, { resolve, reject });
        sendToChild({ type: 'call', callId, ...message });
      });
    },
    onTool(listener) {
      toolListeners.add(listener);
      return () => toolListeners.delete(listener);
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      sendToChild({ type: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}
