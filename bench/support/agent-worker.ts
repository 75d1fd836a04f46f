/**
 * A durable-agent worker process for the benches: the project's own worker (createAgentWorker) with
 * the bench tools, pointed at the bench model server. Started by worker-process.ts; talks over IPC.
 */
import { DefaultLogger, NativeConnection, Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import OpenAI from 'openai';
import { ToolRegistry } from '../../src/tools/registry';
import { createAgentWorker } from '../../src/worker/create-worker';
import { benchTools } from './bench-tools';
import { type WorkerEnv, failWorker, reportTool, serveRunner } from './protocol';
import { scratchDir } from './scratch';

async function main(): Promise<void> {
  const env = process.env as NodeJS.ProcessEnv & WorkerEnv;
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } },
  });
  const connection = await NativeConnection.connect({ address: env.BENCH_TEMPORAL_ADDRESS });
  const worker = await createAgentWorker({
    connection,
    namespace: 'default',
    taskQueue: env.BENCH_TASK_QUEUE,
    workflowBundlePath: env.BENCH_WORKFLOW_BUNDLE,
    shutdownGraceTimeMs: 1_000,
    activities: {
      openai: new OpenAI({ baseURL: env.BENCH_MODEL_URL, apiKey: 'bench', maxRetries: 0 }),
      defaultModel: 'bench-model',
      tools: new ToolRegistry(benchTools(reportTool)),
      defaultWorkspace: scratchDir('workspace-'),
    },
  });
  await serveRunner(worker, connection);
}

main().catch(failWorker);
