import { hostname } from 'node:os';
import type { ClientOptions, ClientPlugin } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import {
  type BundleOptions,
  type BundlerPlugin,
  type InjectedSinks,
  type ReplayWorkerOptions,
  Runtime,
  Worker,
  type WorkerOptions,
  type WorkerPlugin,
} from '@temporalio/worker';
import { type ResolvedActivityDeps, createActivities } from '../activities/create-activities';
import { LiveModelCalls } from '../activities/live-model-calls';
import { type LocalCancelRequests, processLocalCancelRequests } from '../activities/local-cancel-requests';
import type { CancelRequestSinks } from '../shared/cancel-request-sink';
import { workerBoundTaskQueue } from '../shared/worker-bound';
import type { ToolRegistry } from '../tools/registry';
import { type AgentPluginOptions, activityDepsFrom } from './agent-plugin-options';
import { agentPreloadModules, workflowsWithAgent } from './combined-workflows';
import { agentDataConverter } from './data-converter';
import { type LiveEndpoint, startLiveEndpoint } from './live-endpoint';
import { lostWorkerStickiness } from './lost-worker-stickiness';
import { announceCancelRequest, identityWithLiveEndpoint } from './remote-cancel-announcer';
import { applyWorkerToolPolicy } from './worker-tool-policy';
import { workflowCodeOption, workflowSourcesOption } from './workflow-bundle';

/**
 * A workflow task for a conversation goes first to the worker that holds it in its cache. When that
 * worker has died (SIGKILL, a lost machine) nothing says so but this timeout: Temporal's default, 10
 * s, was most of the 13 s a conversation stood still after its worker was killed. At 1 s a worker
 * that is alive but slower than that to take its own task only costs a replay elsewhere.
 */
export const STICKY_QUEUE_TIMEOUT_MS = 1_000;

/** What the plugin put together for one worker, kept until that worker stops. */
interface Assembly {
  options: WorkerOptions;
  activities: ReturnType<typeof createActivities>;
  tools: ToolRegistry;
  ownsTools: boolean;
  endpoint: LiveEndpoint | undefined;
  /** Activity-only workers of worker-bound tool tables (background processes), while running. */
  companions: Worker[];
}

/**
 * durable-agent as a Temporal plugin: give it to your own `Worker.create({ plugins })` and that
 * worker also runs agent conversations (the conversation workflow and its companions, the model and
 * tool activities, the interceptors, sinks and push endpoint they need) beside your workflows and
 * activities. Give it to your `Client` too, for the data converter conversations are written with.
 *
 * A worker that names its own `workflowsPath` gets a workflow module exporting its workflows and
 * durable-agent's; one that names neither path nor bundle gets durable-agent's prebuilt bundle. A
 * prebuilt `workflowBundle` of yours must be built with this plugin in `bundleWorkflowCode({ plugins })`.
 *
 * One plugin may serve several workers, each on its own task queue.
 */
export class DurableAgentPlugin implements WorkerPlugin, ClientPlugin, BundlerPlugin {
  readonly name = 'durable-agent';
  private readonly assemblies = new Map<string, Assembly>();
  private readonly dataConverter: DataConverter;

  constructor(private readonly options: AgentPluginOptions = {}) {
    this.dataConverter = options.dataConverter ?? agentDataConverter();
  }

  configureClient(options: ClientOptions): ClientOptions {
    return { ...options, dataConverter: options.dataConverter ?? this.dataConverter };
  }

  async configureWorker(options: WorkerOptions): Promise<WorkerOptions> {
    const taskQueue = options.taskQueue;
    if (this.assemblies.has(taskQueue)) {
      throw new Error(`durable-agent already serves task queue ${taskQueue} with this plugin`);
    }
    const assembly = await this.assemble(options);
    this.assemblies.set(taskQueue, assembly);
    return assembly.options;
  }

  configureReplayWorker(options: ReplayWorkerOptions): ReplayWorkerOptions {
    return {
      ...options,
      dataConverter: options.dataConverter ?? this.dataConverter,
      ...this.workflowCode(options),
    };
  }

  configureBundler(options: BundleOptions): BundleOptions {
    return {
      ...options,
      workflowsPath: workflowsWithAgent(options.workflowsPath),
      preloadModules: [...new Set([...agentPreloadModules(), ...(options.preloadModules ?? [])])],
    };
  }

  /** Runs the worker with its companions; they stop and fail together, then the plugin lets go. */
  async runWorker(worker: Worker, next: (worker: Worker) => Promise<void>): Promise<void> {
    const assembly = this.assemblies.get(worker.options.taskQueue);
    if (!assembly) return next(worker);
    const stopAll = () => {
      for (const each of [worker, ...assembly.companions]) if (each.getState() === 'RUNNING') each.shutdown();
    };
    // Started first, so a shutdown asked for while the companions are made finds it running.
    const runs = [next(worker).finally(stopAll)];
    try {
      assembly.companions = await this.startCompanions(assembly);
      if (worker.getState() === 'RUNNING') {
        runs.push(...assembly.companions.map((each) => each.run().finally(stopAll)));
      }
    } catch (error) {
      runs.push(Promise.reject(error));
      stopAll();
    }
    try {
      const failed = (await Promise.allSettled(runs)).find(
        (outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected',
      );
      if (failed) throw failed.reason;
    } finally {
      this.assemblies.delete(worker.options.taskQueue);
      await release(assembly);
    }
  }

  /**
   * Lets go of what the plugin started for the worker of `taskQueue` (its push endpoint, the tool
   * sources it made) when that worker will not run: its `Worker.create` failed after the plugin
   * configured it. A worker that runs is let go of when it stops.
   */
  async abandon(taskQueue: string): Promise<void> {
    const assembly = this.assemblies.get(taskQueue);
    this.assemblies.delete(taskQueue);
    if (assembly) await release(assembly);
  }

  /** Activities running now on the worker of `taskQueue` and its companions. */
  inFlightActivities(worker: Worker): number {
    const companions = this.assemblies.get(worker.options.taskQueue)?.companions ?? [];
    return [worker, ...companions].reduce((sum, each) => sum + each.getStatus().numInFlightActivities, 0);
  }

  /** Stops the companions of the worker of `taskQueue` (the worker itself is stopped by its owner). */
  shutdownCompanions(worker: Worker): void {
    for (const each of this.assemblies.get(worker.options.taskQueue)?.companions ?? []) {
      if (each.getState() === 'RUNNING') each.shutdown();
    }
  }

  private async assemble(options: WorkerOptions): Promise<Assembly> {
    const serves = this.options.serves ?? 'all';
    const { deps: given, ownsTools } = await activityDepsFrom(this.options);
    const cancels = given.cancelRequests ?? processLocalCancelRequests;
    const liveCalls = new LiveModelCalls();
    const endpoint = this.options.liveEndpoint
      ? await startLiveEndpoint({ ...this.options.liveEndpoint, calls: liveCalls, cancels })
      : undefined;
    try {
      const deps = this.withWorkerPolicy(given, serves, endpoint ? liveCalls : undefined);
      const activities = createActivities(deps);
      refuseActivityClash(options.activities, activities);
      const workflows = serves === 'activities' ? {} : this.workflowSide(options, cancels, endpoint);
      const configured: WorkerOptions = {
        ...options,
        ...workflows,
        activities: { ...(options.activities ?? {}), ...activities },
        dataConverter: options.dataConverter ?? this.dataConverter,
        interceptors: {
          ...options.interceptors,
          activity: [
            ...(options.interceptors?.activity ?? []),
            lostWorkerStickiness((context) => context.client.workflowService),
          ],
        },
        ...this.tuning(options),
        ...(serves === 'workflows' ? { enableNonLocalActivities: false } : {}),
        // Others find this worker's push endpoint in the identity the server shows for its activities.
        ...(endpoint
          ? {
              identity: identityWithLiveEndpoint(
                options.identity ?? `${process.pid}@${hostname()}`,
                endpoint,
              ),
            }
          : {}),
      };
      return { options: configured, activities, tools: deps.tools, ownsTools, endpoint, companions: [] };
    } catch (error) {
      await endpoint?.close();
      if (ownsTools) await given.tools.close();
      throw error;
    }
  }

  /** The worker-wide tool policy, and what serving only activities or having a push endpoint changes. */
  private withWorkerPolicy(
    deps: ResolvedActivityDeps,
    serves: 'all' | 'workflows' | 'activities',
    liveCalls: LiveModelCalls | undefined,
  ): ResolvedActivityDeps {
    const policy = this.options.toolPolicy;
    const tools = policy
      ? applyWorkerToolPolicy(deps.tools, policy, (message) => Runtime.instance().logger.warn(message))
      : deps.tools;
    return {
      ...deps,
      tools,
      // A worker that runs only activities belongs to a fleet that runs workflows elsewhere: its tools
      // are listed as activities only, so none runs on a workflows-only worker.
      ...(serves === 'activities' ? { localTools: false } : {}),
      ...(liveCalls ? { liveCalls } : {}),
    };
  }

  /** The sinks conversations report cancel requests through, and the workflow code. */
  private workflowSide(
    options: WorkerOptions,
    cancels: LocalCancelRequests,
    endpoint: LiveEndpoint | undefined,
  ): Partial<WorkerOptions> {
    const sinks = cancelRequestSinks(cancels, (workflowId, runId) => {
      if (endpoint && options.connection) {
        announceCancelRequest(
          options.connection,
          options.namespace ?? 'default',
          endpoint.url,
          workflowId,
          runId,
        );
      }
    });
    return { sinks: { ...options.sinks, ...sinks }, ...this.workflowCode(options) };
  }

  /**
   * A worker naming its own workflow code keeps it (the bundler step adds ours to a path); one
   * naming none gets ours.
   */
  private workflowCode(
    options: Pick<WorkerOptions, 'workflowsPath' | 'workflowBundle'>,
  ): Partial<WorkerOptions> {
    if (options.workflowsPath || options.workflowBundle) return {};
    return this.options.bundleWorkflowsAtStart
      ? workflowSourcesOption()
      : workflowCodeOption(this.options.workflowBundlePath);
  }

  /** The plugin's worker settings, where the worker sets none of its own. */
  private tuning(options: WorkerOptions): Partial<WorkerOptions> {
    const throttle = this.options.heartbeatThrottleMs ?? 1_000;
    return {
      maxHeartbeatThrottleInterval: options.maxHeartbeatThrottleInterval ?? throttle,
      defaultHeartbeatThrottleInterval: options.defaultHeartbeatThrottleInterval ?? throttle,
      shutdownGraceTime: options.shutdownGraceTime ?? this.options.shutdownGraceTimeMs ?? 300_000,
      maxConcurrentActivityTaskExecutions:
        options.maxConcurrentActivityTaskExecutions ?? this.options.maxConcurrentActivities ?? 200,
      stickyQueueScheduleToStartTimeout:
        options.stickyQueueScheduleToStartTimeout ??
        this.options.stickyQueueTimeoutMs ??
        STICKY_QUEUE_TIMEOUT_MS,
    };
  }

  /**
   * Activity-only workers for calls naming a background process this worker holds. Their queues are
   * this process's own, so they stay unversioned: no other build could take their tasks anyway.
   */
  private async startCompanions(assembly: Assembly): Promise<Worker[]> {
    const { options } = assembly;
    return Promise.all(
      workerTags(assembly.tools).map((tag) =>
        Worker.create({
          connection: options.connection,
          namespace: options.namespace,
          taskQueue: workerBoundTaskQueue(options.taskQueue, tag),
          activities: assembly.activities,
          dataConverter: options.dataConverter,
          interceptors: { activity: options.interceptors?.activity ?? [] },
          maxHeartbeatThrottleInterval: options.maxHeartbeatThrottleInterval,
          defaultHeartbeatThrottleInterval: options.defaultHeartbeatThrottleInterval,
          shutdownGraceTime: options.shutdownGraceTime,
          ...(options.identity ? { identity: options.identity } : {}),
          maxConcurrentActivityTaskExecutions: 50,
        }),
      ),
    );
  }
}

async function release(assembly: Assembly): Promise<void> {
  await assembly.endpoint?.close().catch(() => undefined);
  if (assembly.ownsTools) await assembly.tools.close().catch(() => undefined);
}

/** A team's activity with the name of one of ours would be silently replaced: refuse instead. */
function refuseActivityClash(theirs: object | undefined, ours: object): void {
  const clash = Object.keys(theirs ?? {}).filter((name) => name in ours);
  if (clash.length) {
    throw new Error(
      `this worker's activities ${clash.join(', ')} have the names of durable-agent's; rename them (durable-agent's names are ${Object.keys(ours).join(', ')})`,
    );
  }
}

/** The tags of the worker-bound tool tables among the worker's own tools. */
function workerTags(tools: ToolRegistry): string[] {
  const tags = tools.names().flatMap((name) => {
    const tool = tools.get(name);
    return tool?.workerBound ? [tool.workerBound.workerTag] : [];
  });
  return [...new Set(tags)];
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
