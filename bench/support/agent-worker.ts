/**
 * A durable-agent worker process for the benches: the project's own worker (createAgentWorker) with
 * the bench tools, pointed at the bench model server. Started by worker-process.ts; talks over IPC.
 */
import { DefaultLogger, NativeConnection, Runtime, makeTelemetryFilterString } from '@temporalio/worker';
import OpenAI from 'openai';
import { spawnTool } from '../../src/tools/builtin/spawn-tool';
import { builtinTools } from '../../src/tools/builtin/builtin-tools';
import { ToolRegistry } from '../../src/tools/registry';
import { fleetModelLimiter } from '../../src/activities/model-lease';
import { createAgentWorker } from '../../src/worker/create-worker';
import { agentDataConverter } from '../../src/worker/data-converter';
import { modelLimiterFromEnv } from '../../src/worker/model-limit-settings';
import { ensureSearchAttributes } from '../../src/temporal-server/search-attribute-registration';
import { benchTools } from './bench-tools';
import { type WorkerEnv, failWorker, reportTool, serveRunner } from './protocol';
import { scratchDir } from './scratch';
import { stallingCodec } from './stalling-codec';

async function main(): Promise<void> {
  const env = process.env as NodeJS.ProcessEnv & WorkerEnv;
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } },
  });
  const limiter = modelLimiterFromEnv({ ...env, OPENAI_BASE_URL: env.BENCH_MODEL_URL });
  const connection = await NativeConnection.connect({ address: env.BENCH_TEMPORAL_ADDRESS });
  const worker = await createAgentWorker({
    connection,
    namespace: 'default',
    taskQueue: env.BENCH_TASK_QUEUE,
    workflowBundlePath: env.BENCH_WORKFLOW_BUNDLE,
    shutdownGraceTimeMs: 1_000,
    ...(env.BENCH_STALL_MARKED_TASKS === '1' ? { dataConverter: stallingDataConverter() } : {}),
    activities: {
      openai: new OpenAI({ baseURL: env.BENCH_MODEL_URL, apiKey: 'bench', maxRetries: 0 }),
      defaultModel: 'bench-model',
      tools: new ToolRegistry([
        ...benchTools(reportTool),
        ...(env.BENCH_SUB_AGENTS === '1' ? [spawnTool] : []),
        // What a worker of `durable-agent worker` offers besides (the prompt-prefix bench).
        ...(env.BENCH_BUILTIN_TOOLS === '1' ? builtinTools() : []),
      ]),
      defaultWorkspace: scratchDir('workspace-'),
      ...(limiter ? { limiter: fleetModelLimiter(limiter) } : {}),
      ...(env.BENCH_SEARCH_ATTRIBUTES === '1'
        ? { searchAttributes: await ensureSearchAttributes(connection, 'default', () => undefined) }
        : {}),
    },
    ...(env.BENCH_SERVES === 'workflows' || env.BENCH_SERVES === 'activities'
      ? { serves: env.BENCH_SERVES }
      : {}),
    ...(env.BENCH_LIVE_ENDPOINT === '1' ? { liveEndpoint: { host: '127.0.0.1', port: 0 } } : {}),
  });
  await serveRunner(worker, connection);
}

/** The worker's own codecs with the bench's stall outermost, so it reads payloads as decoded. */
function stallingDataConverter() {
  const converter = agentDataConverter();
  return { ...converter, payloadCodecs: [stallingCodec(), ...(converter.payloadCodecs ?? [])] };
}

main().catch(failWorker);
