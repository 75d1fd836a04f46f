/**
 * A worker on a host of its own, assembled from its environment by the built `durable-agent worker`
 * code (its Temporal connection from a `temporal.toml` profile, the model, the push endpoint and its
 * TLS), with one more tool: `slow_count`, which counts heartbeating while MARKER_DIR/hold exists and
 * appends WORKER_NAME to MARKER_DIR/attempts each time it starts. Environment besides the worker's
 * own: WORKER_NAME, MARKER_DIR, WORKSPACE. Prints `ready` once it polls its task queue.
 */
import { access, appendFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { defineTool, textResult } from '../../../src/tools/tool';
import type * as LocalWorker from '../../../src/worker/local-worker';

/** The built worker, as `durable-agent worker` runs it, with the workflow bundle the build made. */
const BUILT_WORKER = path.resolve(__dirname, '../../../dist/worker/local-worker.js');

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};
const held = () =>
  access(path.join(env('MARKER_DIR'), 'hold')).then(
    () => true,
    () => false,
  );
/** However long the test holds it, the count gives up after this many steps of 100 ms. */
const MAX_STEPS = 1_200;

const slowCount = defineTool({
  name: 'slow_count',
  label: 'Slow count',
  description: 'Counts to n, one step every 100 ms.',
  parameters: z.object({ n: z.number().int().min(1).max(100) }),
  category: 'other',
  idempotent: true,
  // Medium risk: the conversation asks before it runs.
  risk: 'medium',
  // The heartbeat timeout and retries of every read-only tool: the other worker gets an attempt once
  // the frontend has dropped the cut-off host's connection (its long polls with it).
  async execute(toolCallId, params, signal, onUpdate) {
    await appendFile(path.join(env('MARKER_DIR'), 'attempts'), `${env('WORKER_NAME')} ${toolCallId}\n`);
    for (let step = 1; step <= params.n || ((await held()) && step < MAX_STEPS); step++) {
      if (signal.aborted) throw signal.reason;
      await new Promise((resolve) => setTimeout(resolve, 100));
      onUpdate({ details: { step: Math.min(step, params.n) } });
    }
    return textResult(`counted to ${params.n} on ${env('WORKER_NAME')}`);
  },
});

async function main() {
  const { startWorkerFromEnv } = (await import(BUILT_WORKER)) as typeof LocalWorker;
  const worker = await startWorkerFromEnv({
    workspace: env('WORKSPACE'),
    env: process.env,
    log: (line) => process.stderr.write(`${line}\n`),
    moreSources: [
      { name: 'slow', discover: () => Promise.resolve({ tools: [slowCount as never], warnings: [] }) },
    ],
  });
  for (let waited = 0; !worker.polling(); waited += 50) {
    if (waited > 60_000) throw new Error('the worker does not poll after 60 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  process.stdout.write('ready\n');
  process.once('SIGTERM', () => void worker.stop().then(() => process.exit(0)));
  await worker.done;
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(1);
});
