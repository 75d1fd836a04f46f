import type { ConnectionSettings } from '../shared/connection-settings';
import type { Tracing } from '../worker/tracing';
import type { RunningWorker, WorkerFromEnvOptions } from '../worker/local-worker';
import { type Cleanups, log } from './cleanups';

// src/worker is loaded on demand: commands that only talk to Temporal never pay for it.

/** TEMPORAL_ADDRESS, a server already on the embedded port, or the embedded server started now. */
export async function ensureServer(settings: ConnectionSettings, cleanups: Cleanups): Promise<string> {
  const [{ ensureTemporalServer }, { startCodecServerFor }] = await Promise.all([
    import('../temporal-server/ensure-server'),
    import('./embedded-codec-server'),
  ]);
  const server = await ensureTemporalServer(settings, process.env, log, (pid, embedded) =>
    startCodecServerFor(pid, embedded, process.env),
  );
  const embedded = server.embedded;
  if (embedded) {
    cleanups.last(async () => {
      // Another `run` or worker may have found this server and still need it.
      const { otherWorkersPoll } = await import('../worker/other-workers');
      const shared = await otherWorkersPoll(server.address, settings.namespace, settings.taskQueue).catch(
        () => false,
      );
      if (!shared) return embedded.stop();
      log(
        `Other workers still use the Temporal server on ${server.address}; leaving it running (pid ${embedded.pid}).`,
      );
      embedded.detach();
    });
  }
  return server.address;
}

/** TEMPORAL_ADDRESS, or a server already on the embedded port; never starts one. */
export async function findRunningServer(settings: ConnectionSettings): Promise<string> {
  if (settings.address) return settings.address;
  const [{ embeddedServerSettings }, { isListening }] = await Promise.all([
    import('../temporal-server/ensure-server'),
    import('../platform/free-port'),
  ]);
  const { port } = embeddedServerSettings(process.env);
  if (await isListening('127.0.0.1', port)) return `127.0.0.1:${port}`;
  throw new Error(
    `no Temporal server on 127.0.0.1:${port}, so no conversation is running there: start one with \`durable-agent server\` (or \`run\`, \`worker\`), or set TEMPORAL_ADDRESS`,
  );
}

/** True, after saying how to configure one, when the environment names no model for a worker here. */
export async function noModelConfigured(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const { modelSettingsFromEnv, MODEL_SETUP_HELP } = await import('../activities/models/model-settings');
  if (modelSettingsFromEnv(env)) return false;
  log(MODEL_SETUP_HELP);
  return true;
}

/**
 * A worker in this process, assembled from the environment (src/worker/local-worker.ts) with this
 * process's tracing; stopped by the cleanups. The environment is this process's unless `env` says.
 */
export async function startLocalWorker(
  options: Omit<WorkerFromEnvOptions, 'env' | 'log' | 'tracing'> & { env?: NodeJS.ProcessEnv },
  cleanups: Cleanups,
): Promise<Pick<RunningWorker, 'done' | 'polling'>> {
  const { startWorkerFromEnv } = await import('../worker/local-worker');
  const tracing = await processTracing(cleanups);
  const worker = await startWorkerFromEnv({
    env: process.env,
    ...options,
    log,
    ...(tracing ? { tracing } : {}),
  });
  cleanups.first(worker.stop);
  return { done: worker.done, polling: worker.polling };
}

let tracing: Promise<Tracing | undefined> | undefined;

/** This process's OpenTelemetry tracing (from the OTEL_* variables), set up once; its spans are flushed at exit. */
export function processTracing(cleanups: Cleanups): Promise<Tracing | undefined> {
  tracing ??= import('../worker/tracing').then(async ({ tracingFromEnv }) => {
    const started = await tracingFromEnv(process.env);
    if (started) cleanups.last(() => started.shutdown());
    return started;
  });
  return tracing;
}
