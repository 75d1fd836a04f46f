import { type ChildProcess, fork } from 'node:child_process';
import path from 'node:path';
import type { FromWorker, MemoryReport, ToWorker, ToolReport, WorkerEnv } from './protocol';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');

export interface WorkerProcess {
  pid: number;
  memory(resetPeak?: boolean): Promise<MemoryReport>;
  /** Every tool report from now on. */
  onTool(listener: (report: ToolReport) => void): () => void;
  stop(): Promise<void>;
}

/**
 * Starts a worker in its own Node process (TypeScript through tsx), so its memory is its own and
 * the runner's client work does not share its event loop. Resolves once the worker polls.
 */
export async function startWorkerProcess(entry: string, env: WorkerEnv): Promise<WorkerProcess> {
  const child: ChildProcess = fork(entry, [], {
    cwd: REPO_ROOT,
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
      }
    });
    void exited.then((code) => {
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
    onTool(listener) {
      toolListeners.add(listener);
      return () => toolListeners.delete(listener);
    },
    async stop() {
      if (child.exitCode !== null) return;
      sendToChild({ type: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
