/**
 * The peer's worker process: a Temporal 1.23 worker with the AiSdkPlugin, its model provider the
 * bench model server (OpenAI-compatible chat completions). Same IPC as durable-agent's worker.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { AiSdkPlugin } from '@temporalio/ai-sdk';
import {
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  bundleWorkflowCode,
  makeTelemetryFilterString,
} from '@temporalio/worker';
import { type WorkerEnv, failWorker, serveRunner } from '../../support/protocol';
import * as activities from './activities';

/**
 * The workflow bundle at `file`, bundled and written there by the first worker that needs it,
 * through the plugin, which puts the AI SDK's polyfills first in it.
 */
async function workflowBundle(file: string, plugin: AiSdkPlugin): Promise<{ codePath: string }> {
  if (!existsSync(file)) {
    const { code } = await bundleWorkflowCode({
      workflowsPath: require.resolve('./workflows'),
      logger: new DefaultLogger('ERROR'),
      plugins: [plugin],
    });
    await writeFile(file, code);
  }
  return { codePath: file };
}

async function main(): Promise<void> {
  const env = process.env as NodeJS.ProcessEnv & WorkerEnv;
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } },
  });
  const connection = await NativeConnection.connect({ address: env.BENCH_TEMPORAL_ADDRESS });
  const plugin = new AiSdkPlugin({
    modelProvider: createOpenAICompatible({
      name: 'bench',
      baseURL: env.BENCH_MODEL_URL,
      apiKey: 'bench',
    }),
  });
  const worker = await Worker.create({
    connection,
    namespace: 'default',
    taskQueue: env.BENCH_TASK_QUEUE,
    workflowBundle: await workflowBundle(env.BENCH_WORKFLOW_BUNDLE, plugin),
    activities,
    plugins: [plugin],
    // As durable-agent's worker: 200 activities at once.
    maxConcurrentActivityTaskExecutions: 200,
    shutdownGraceTime: 1_000,
  });
  await serveRunner(worker, connection);
}

main().catch(failWorker);
