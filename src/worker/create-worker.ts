import { hostname } from 'node:os';
import type { DataConverter, WorkerDeploymentVersion } from '@temporalio/common';
import { type InjectedSinks, type NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { type ActivityDeps, createActivities } from '../activities/create-activities';
import { type LocalCancelRequests, processLocalCancelRequests } from '../activities/local-cancel-requests';
import type { CancelRequestSinks } from '../shared/cancel-request-sink';
import type { ToolPolicy } from '../shared/tool-policy';
import { workerBoundTaskQueue } from '../shared/worker-bound';
import type { ToolRegistry } from '../tools/registry';
import { LiveModelCalls } from '../activities/live-model-calls';
import { AgentWorker } from './agent-worker';
import { startLiveEndpoint } from './live-endpoint';
import { announceCancelRequest, identityWithLiveUrl } from './remote-cancel-announcer';
import { agentDataConverter } from './data-converter';
import { lostWorkerStickiness } from './lost-worker-stickiness';
import { applyWorkerToolPolicy } from './worker-tool-policy';
import { workflowCodeOption, workflowSourcesOption } from './workflow-bundle';
import type { Tracing } from './tracing';

export interface AgentWorkerOptions {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  activities: ActivityDeps;
  /** A workflow bundle built ahead of time; by default the one `npm run build` writes, else bundled now. */
  workflowBundlePath?: string;
  /** Activities this worker runs at once (model calls and tools together). Default 200. */
  maxConcurrentActivities?: number;
  /** How often heartbeat progress is sent at most, in ms. Default 1000, so watchers see progress each second. */
  heartbeatThrottleMs?: number;
  /**
   * On shutdown the worker stops taking work at once but lets running activities finish for this
   * long (ms) before cancelling them. Default 300000, the longest tool category timeout: a worker
   * that stops (a deploy, a `run` ending) does not cut off another conversation's tool mid-way.
   */
  shutdownGraceTimeMs?: number;
  /**
   * How long a workflow task waits on this worker's sticky queue (the worker that holds the
   * conversation in its cache) before any worker of the task queue may take it, in ms. Default
   * `STICKY_QUEUE_TIMEOUT_MS`.
   */
  stickyQueueTimeoutMs?: number;
  /** Clients of these conversations need the same one. Default: `agentDataConverter()` from the environment. */
  dataConverter?: DataConverter;
  /**
   * The worker-wide (global) step of the tool policy pipeline: tools it denies, or does not allow,
   * are neither offered to any conversation nor run. Unknown entries are logged as warnings.
   */
  toolPolicy?: ToolPolicy;
  /**
   * Traces of workflows and activities (and the model calls in them), continuing the client's. The
   * workflow code is then bundled at start, with the tracing interceptors in it.
   */
  tracing?: Tracing;
  /**
   * The worker's push endpoint (model text for watchers elsewhere, knocks for cancel requests):
   * where it listens and the URL others reach it at. Off when absent.
   */
  liveEndpoint?: { host: string; port: number; advertisedUrl?: string };
  /**
   * What this worker takes from the task queue: `all` (the default), `workflows` (conversations and
   * their local activities, no model or tool calls) or `activities` (model and tool calls only), for
   * fleets that run the two apart.
   */
  serves?: 'all' | 'workflows' | 'activities';
  /**
   * The Worker Deployment Version this worker serves (Temporal's Worker Versioning): a conversation
   * runs only on workers of the version it started on, until it continues as new onto the
   * deployment's current version. Unversioned when absent.
   */
  deployment?: WorkerDeploymentVersion;
}

/**
 * A workflow task for a conversation goes first to the worker that holds it in its cache. When that
 * worker has died (SIGKILL, a lost machine) nothing says so but this timeout: Temporal's default, 10
 * s, was most of the 13 s a conversation stood still after its worker was killed. At 1 s a worker
 * that is alive but slower than that to take its own task only costs a replay elsewhere.
 */
export const STICKY_QUEUE_TIMEOUT_MS = 1_000;

export async function createAgentWorker(options: AgentWorkerOptions): Promise<AgentWorker> {
  const throttle = options.heartbeatThrottleMs ?? 1_000;
  const cancels = options.activities.cancelRequests ?? processLocalCancelRequests;
  const liveCalls = new LiveModelCalls();
  const endpoint = options.liveEndpoint
    ? await startLiveEndpoint({ ...options.liveEndpoint, calls: liveCalls, cancels })
    : undefined;
  const withTools = options.toolPolicy
    ? {
        ...options.activities,
        tools: applyWorkerToolPolicy(options.activities.tools, options.toolPolicy, (message) =>
          Runtime.instance().logger.warn(message),
        ),
      }
    : options.activities;
  // A worker that runs only activities belongs to a fleet that runs workflows elsewhere: its tools
  // are listed as activities only, so none runs on a workflows-only worker.
  const local = options.serves === 'activities' ? { ...withTools, localTools: false } : withTools;
  const deps = endpoint ? { ...local, liveCalls } : local;
  const activities = createActivities(deps);
  const plugins = options.tracing ? [await tracingPlugin(options.tracing)] : [];
  const common = {
    connection: options.connection,
    namespace: options.namespace,
    activities,
    dataConverter: options.dataConverter ?? agentDataConverter(),
    maxHeartbeatThrottleInterval: throttle,
    defaultHeartbeatThrottleInterval: throttle,
    shutdownGraceTime: options.shutdownGraceTimeMs ?? 300_000,
    interceptors: { activity: [lostWorkerStickiness((context) => context.client.workflowService)] },
    ...(plugins.length ? { plugins } : {}),
    // Others find this worker's push endpoint in the identity the server shows for its activities.
    ...(endpoint ? { identity: identityWithLiveUrl(`${process.pid}@${hostname()}`, endpoint.url) } : {}),
  };
  try {
    const serves = options.serves ?? 'all';
    const workflows =
      serves === 'activities'
        ? {}
        : {
            sinks: cancelRequestSinks(cancels, (workflowId, runId) => {
              if (endpoint)
                announceCancelRequest(options.connection, options.namespace, endpoint.url, workflowId, runId);
            }),
            ...(options.tracing ? workflowSourcesOption() : workflowCodeOption(options.workflowBundlePath)),
          };
    const main = await Worker.create({
      ...common,
      taskQueue: options.taskQueue,
      ...workflows,
      ...(serves === 'workflows' ? { enableNonLocalActivities: false } : {}),
      maxConcurrentActivityTaskExecutions: options.maxConcurrentActivities ?? 200,
      stickyQueueScheduleToStartTimeout: options.stickyQueueTimeoutMs ?? STICKY_QUEUE_TIMEOUT_MS,
      ...(options.deployment ? { workerDeploymentOptions: versionedWorker(options.deployment) } : {}),
    });
    // Activities only: calls naming a background process this worker holds. Their queues are this
    // process's own, so they stay unversioned: no other build could take their tasks anyway.
    const bound = await Promise.all(
      workerTags(deps.tools).map((tag) =>
        Worker.create({
          ...common,
          taskQueue: workerBoundTaskQueue(options.taskQueue, tag),
          maxConcurrentActivityTaskExecutions: 50,
        }),
      ),
    );
    return new AgentWorker(main, bound, async () => endpoint?.close());
  } catch (error) {
    await endpoint?.close();
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

/** The tags of the worker-bound tool tables among the worker's own tools. */
function workerTags(tools: ToolRegistry): string[] {
  const tags = tools.names().flatMap((name) => {
    const tool = tools.get(name);
    return tool?.workerBound ? [tool.workerBound.workerTag] : [];
  });
  return [...new Set(tags)];
}

async function tracingPlugin(tracing: Tracing) {
  const { OpenTelemetryPlugin } = await import('@temporalio/interceptors-opentelemetry');
  return new OpenTelemetryPlugin({ resource: tracing.resource, spanProcessor: tracing.spanProcessor });
}

/**
 * Activities of this process hear their workflow's cancel requests from it at once; those of other
 * processes through a knock on their push endpoint (`elsewhere`).
 */
function cancelRequestSinks(
  cancels: LocalCancelRequests,
  elsewhere: (workflowId: string, runId: string) => void,
): InjectedSinks<CancelRequestSinks> {
  return {
    cancelRequests: {
      requested: {
        fn: (info) => {
          cancels.requested(info.runId);
          elsewhere(info.workflowId, info.runId);
        },
        callDuringReplay: false,
      },
    },
  };
}
