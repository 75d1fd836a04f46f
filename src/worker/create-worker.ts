import type { WorkerDeploymentVersion } from '@temporalio/common';
import { type NativeConnection, Worker } from '@temporalio/worker';
import type { ActivityDeps } from '../activities/create-activities';
import { AgentWorker } from './agent-worker';
import { DurableAgentPlugin } from './agent-plugin';
import type { AgentWorkerTuning } from './agent-plugin-options';
import type { Tracing } from './tracing';

export { STICKY_QUEUE_TIMEOUT_MS } from './agent-plugin';

/** A worker that runs nothing but durable-agent, with its activities' dependencies given in full. */
export interface AgentWorkerOptions extends AgentWorkerTuning {
  /** The worker's connection to Temporal. */
  connection: NativeConnection;
  /** The namespace conversations run in. */
  namespace: string;
  /** The task queue conversations are started on. */
  taskQueue: string;
  /** The model and tool activities' dependencies, in full. */
  activities: ActivityDeps;
  /**
   * Traces of workflows and activities (and the model calls in them), continuing the client's. The
   * workflow code is then bundled at start, with the tracing interceptors in it.
   */
  tracing?: Tracing;
  /**
   * The Worker Deployment Version this worker serves (Temporal's Worker Versioning): a conversation
   * runs only on workers of the version it started on, until it continues as new onto the
   * deployment's current version. Unversioned when absent.
   */
  deployment?: WorkerDeploymentVersion;
  /**
   * The identity the server shows for this worker's polls and the activities it runs. Default
   * Temporal's `<pid>@<host>`, by which `status` and the embedded server tell a worker of this
   * machine that has exited from one still running.
   */
  identity?: string;
}

/**
 * A Temporal worker of durable-agent alone, built the one way every worker is: the plugin on a
 * worker of the given task queue (with tracing and Worker Versioning when asked).
 */
export async function createAgentWorker(options: AgentWorkerOptions): Promise<AgentWorker> {
  const { connection, namespace, taskQueue, tracing, deployment, identity, ...pluginOptions } = options;
  const plugin = new DurableAgentPlugin({
    ...pluginOptions,
    ...(tracing ? { bundleWorkflowsAtStart: true } : {}),
  });
  const plugins = [plugin, ...(tracing ? [await tracingPlugin(tracing)] : [])];
  try {
    const main = await Worker.create({
      connection,
      namespace,
      taskQueue,
      plugins,
      ...(identity !== undefined ? { identity } : {}),
      ...(deployment ? { workerDeploymentOptions: versionedWorker(deployment) } : {}),
    });
    return new AgentWorker(main, plugin);
  } catch (error) {
    await plugin.abandon(taskQueue);
    throw error;
  }
}

/**
 * Every workflow of a versioned worker is pinned to the version it started on, so that a workflow
 * change never meets a history another build recorded; the conversation moves to the current
 * version itself, when it continues as new. Said here rather than by `setWorkflowOptions` in the
 * workflow: the server refuses a workflow task that names a behaviour from an unversioned worker.
 */
function versionedWorker(version: WorkerDeploymentVersion) {
  return { version, useWorkerVersioning: true, defaultVersioningBehavior: 'PINNED' } as const;
}

async function tracingPlugin(tracing: Tracing) {
  const { OpenTelemetryPlugin } = await import('@temporalio/interceptors-opentelemetry');
  return new OpenTelemetryPlugin({ resource: tracing.resource, spanProcessor: tracing.spanProcessor });
}
