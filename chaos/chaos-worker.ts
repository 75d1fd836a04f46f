/**
 * A worker in its own process for `npm run chaos`, so it can be SIGKILLed at any moment. Its
 * `record` tool has a side effect that must happen at most once: it appends the key to LEDGER,
 * between two pauses that leave time to be killed before and after writing.
 */
import { appendFile } from 'node:fs/promises';
import path from 'node:path';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import OpenAI from 'openai';
import { z } from 'zod';
import { ToolRegistry } from '../src/tools/registry';
import { defineTool, textResult } from '../src/tools/tool';
import { createAgentWorker } from '../src/worker/create-worker';
import { connectWhenServing } from '../src/worker/server-readiness';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const pause = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

const recordTool = defineTool({
  name: 'record',
  label: 'Record',
  description: 'Records the key once (a side effect).',
  parameters: z.object({ key: z.string() }),
  category: 'other',
  idempotent: false,
  risk: 'low',
  heartbeatTimeoutMs: 5_000,
  async execute(_id, params, signal) {
    await pause(200 + Math.random() * 600, signal);
    await appendFile(env('LEDGER'), `${params.key} ${process.pid}\n`);
    await pause(200 + Math.random() * 600);
    return textResult(`recorded ${params.key}`);
  },
});

const slowReadTool = defineTool({
  name: 'slow_read',
  label: 'Slow read',
  description: 'Reads slowly (no side effect).',
  parameters: z.object({ ms: z.number().int().min(0) }),
  category: 'other',
  idempotent: true,
  risk: 'low',
  heartbeatTimeoutMs: 5_000,
  retry: { initialIntervalMs: 200 },
  async execute(_id, params, signal) {
    await pause(params.ms, signal);
    return textResult('read it');
  },
});

async function main() {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  // A worker started again after a kill may find the frontend killed too: like a supervised worker,
  // it waits until the server serves again (bounded: a minute).
  const address = env('TEMPORAL_ADDRESS');
  const connection = await connectWhenServing(() => NativeConnection.connect({ address }), {
    address,
    namespace: 'default',
    timeoutMs: 60_000,
    log: () => undefined,
  });
  const worker = await createAgentWorker({
    connection,
    namespace: 'default',
    taskQueue: env('TASK_QUEUE'),
    shutdownGraceTimeMs: 1_000,
    // The bundle `npm run build` writes: a worker started after a kill polls at once.
    workflowBundlePath: path.join(__dirname, '..', 'dist', 'workflow-bundle.js'),
    activities: {
      openai: new OpenAI({ baseURL: env('OPENAI_BASE_URL'), apiKey: 'chaos', maxRetries: 0 }),
      defaultModel: 'chaos',
      tools: new ToolRegistry([recordTool, slowReadTool]),
      defaultWorkspace: env('WORKSPACE'),
      // Shorter than the fault model's slow first token, so that fault is given up on and tried again.
      streamTimeouts: { firstTokenMs: 2_000 },
    },
  });
  const running = worker.run();
  process.stdout.write('ready\n');
  await running;
}

main().catch((error: Error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
