/**
 * The worker of the bare Temporal loop (bare-workflow.ts): its activities are the floor's steps
 * (loop-steps.ts). Same IPC as the other workers.
 */
import {
  DefaultLogger,
  NativeConnection,
  Runtime,
  Worker,
  makeTelemetryFilterString,
} from '@temporalio/worker';
import { loopSteps } from './loop-steps';
import { type WorkerEnv, failWorker, serveRunner } from './protocol';

async function main(): Promise<void> {
  const env = process.env as NodeJS.ProcessEnv & WorkerEnv;
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } },
  });
  const connection = await NativeConnection.connect({ address: env.BENCH_TEMPORAL_ADDRESS });
  const worker = await Worker.create({
    connection,
    namespace: 'default',
    taskQueue: env.BENCH_TASK_QUEUE,
    workflowBundle: { codePath: env.BENCH_WORKFLOW_BUNDLE },
    activities: loopSteps(env.BENCH_MODEL_URL),
    // As durable-agent's worker.
    maxConcurrentActivityTaskExecutions: 200,
    shutdownGraceTime: 1_000,
  });
  await serveRunner(worker, connection);
}

main().catch(failWorker);
