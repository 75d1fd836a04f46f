import { type WorkflowService, isGrpcServiceError } from '@temporalio/client';
import { setTimeout as sleep } from 'node:timers/promises';
import { optionalTsToDate } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { InvalidInputError } from '../shared/conversation-errors';
import { buildIdProblem, deploymentNameProblem } from '../shared/worker-deployment';
import {
  type CurrentChange,
  DeploymentNotFoundError,
  NoEarlierVersionError,
  type VersionStatus,
  type WorkerDeploymentListing,
  type WorkerDeploymentState,
  type WorkerDeploymentVersionState,
} from '../shared/worker-deployment-state';

type VersionSummary = temporal.api.deployment.v1.WorkerDeploymentInfo.IWorkerDeploymentVersionSummary;
type RoutingConfig = temporal.api.deployment.v1.IRoutingConfig;

const GRPC_NOT_FOUND = 5;
const { RoutingConfigUpdateState, VersionDrainageStatus, WorkerDeploymentVersionStatus } =
  temporal.api.enums.v1;
/** How long a routing change may take to reach the task queues before `setCurrent` stops waiting for it. */
const ROUTING_WAIT_MS = 30_000;

/**
 * The Worker Deployments of a namespace (Temporal's Worker Versioning): which builds of the
 * workers exist, which one new conversations start on (current), which takes a share of them
 * (ramping), and which still serve conversations pinned to them (draining). What `deploy` does.
 */
export class WorkerDeployments {
  constructor(
    private readonly service: WorkflowService,
    private readonly namespace: string,
    /** Who changes the routing, as Temporal records it (`lastModifierIdentity`). */
    private readonly identity = 'durable-agent deploy',
  ) {}

  /** Every Worker Deployment in the namespace, page by page. */
  async *list(): AsyncIterable<WorkerDeploymentListing> {
    let nextPageToken: Uint8Array | undefined;
    do {
      const page = await this.service.listWorkerDeployments({
        namespace: this.namespace,
        ...(nextPageToken ? { nextPageToken } : {}),
      });
      for (const summary of page.workerDeployments ?? []) {
        yield { name: summary.name ?? '', ...routingOf(summary.routingConfig) };
      }
      nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
    } while (nextPageToken);
  }

  /** The deployment's routing and every version it has seen, newest first. */
  async describe(name: string): Promise<WorkerDeploymentState> {
    const { workerDeploymentInfo: info } = await this.call(name, () =>
      this.service.describeWorkerDeployment({ namespace: this.namespace, deploymentName: name }),
    );
    const versions = (info?.versionSummaries ?? []).map(versionOf);
    versions.sort((a, b) => (b.createdAt?.getTime() ?? 0) - (a.createdAt?.getTime() ?? 0));
    for (const version of versions) {
      if (version.status === 'draining') version.pinnedOpen = await this.pinnedOpen(name, version.buildId);
    }
    return { name, ...routingOf(info?.routingConfig), versions };
  }

  /**
   * Open executions pinned to a build, counted now in visibility: the question Temporal asks before
   * it calls a version drained, which it asks only every few minutes. At 0 the build's workers may stop.
   */
  async pinnedOpen(name: string, buildId: string): Promise<number> {
    const { count } = await this.service.countWorkflowExecutions({
      namespace: this.namespace,
      query: pinnedOpenQuery(name, buildId),
    });
    return Number(count ?? 0);
  }

  /**
   * New conversations (and conversations continuing as new) start on `buildId`; conversations
   * pinned to the build that was current stay there until they continue as new, which they do at
   * their next idle point once a workflow task tells them the target changed. The server says so on
   * every workflow task, the sticky ones sent to the worker that holds a conversation in its cache
   * included, so nothing here has to reach those conversations: the change waits only for the new
   * routing to reach the task queues. Temporal refuses a build none of whose workers has polled yet.
   */
  async setCurrent(name: string, buildId: string): Promise<CurrentChange> {
    const response = await this.call(name, () =>
      this.service.setWorkerDeploymentCurrentVersion({
        namespace: this.namespace,
        deploymentName: name,
        buildId,
        identity: this.identity,
      }),
    );
    const previous = response.previousDeploymentVersion?.buildId || undefined;
    const routed = await this.routingReached(name);
    const pinned = previous && previous !== buildId ? await this.pinnedOpen(name, previous) : 0;
    return { routed, pinned, ...(previous ? { previous } : {}) };
  }

  /** `percent` of new executions start on `buildId` instead of the current build. */
  async ramp(
    name: string,
    buildId: string,
    percent: number,
  ): Promise<{
    /** The build that was ramping before, if any. */
    previous?: string;
    /** The share it had. */
    previousPercent?: number;
  }> {
    const response = await this.call(name, () =>
      this.service.setWorkerDeploymentRampingVersion({
        namespace: this.namespace,
        deploymentName: name,
        buildId,
        percentage: percent,
        identity: this.identity,
      }),
    );
    const previous = response.previousDeploymentVersion?.buildId;
    return previous ? { previous, previousPercent: response.previousPercentage ?? 0 } : {};
  }

  /**
   * Makes the build that was current before the present one current again (the non-current
   * version most recently current). Conversations already moved to the present build stay on it
   * until they continue as new: a rollback routes new work, it moves no conversation back.
   */
  async rollback(name: string): Promise<
    CurrentChange & {
      /** The build that is current now. */
      current: string;
    }
  > {
    const state = await this.describe(name);
    const earlier = state.versions
      .filter((version) => version.buildId !== state.current && version.lastCurrentAt !== undefined)
      .sort((a, b) => b.lastCurrentAt!.getTime() - a.lastCurrentAt!.getTime())[0];
    if (!earlier) throw new NoEarlierVersionError(name, state.current);
    const change = await this.setCurrent(name, earlier.buildId);
    // The build it replaced is the one this rollback saw current, whatever the server's answer
    // names while an earlier routing change is still reaching the task queues.
    return { ...change, current: earlier.buildId, ...(state.current ? { previous: state.current } : {}) };
  }

  /** Waits (at most `withinMs`) until the deployment's routing has reached every task queue; false if it has not. */
  async routingReached(name: string, withinMs = ROUTING_WAIT_MS): Promise<boolean> {
    const deadline = Date.now() + withinMs;
    for (;;) {
      const { workerDeploymentInfo: info } = await this.service.describeWorkerDeployment({
        namespace: this.namespace,
        deploymentName: name,
      });
      if (
        info?.routingConfigUpdateState !== RoutingConfigUpdateState.ROUTING_CONFIG_UPDATE_STATE_IN_PROGRESS
      ) {
        return true;
      }
      if (Date.now() > deadline) return false;
      await sleep(200);
    }
  }

  private async call<T>(name: string, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      if (isGrpcServiceError(error) && error.code === GRPC_NOT_FOUND) throw new DeploymentNotFoundError(name);
      throw error;
    }
  }
}

/** Open executions pinned to a version, as Temporal asks before it calls the version drained. */
function pinnedOpenQuery(name: string, buildId: string): string {
  // The names go into a visibility query: only the characters names may have get there.
  const problem = deploymentNameProblem(name) ?? buildIdProblem(buildId);
  if (problem) throw new InvalidInputError('worker deployment version', [problem]);
  return `TemporalWorkerDeploymentVersion = '${name}:${buildId}' AND TemporalWorkflowVersioningBehavior = 'Pinned' AND ExecutionStatus = 'Running'`;
}

function routingOf(
  routing: RoutingConfig | null | undefined,
): Pick<WorkerDeploymentListing, 'current' | 'ramping'> {
  const current = routing?.currentDeploymentVersion?.buildId;
  const ramping = routing?.rampingDeploymentVersion?.buildId;
  return {
    ...(current ? { current } : {}),
    ...(ramping ? { ramping: { buildId: ramping, percent: routing?.rampingVersionPercentage ?? 0 } } : {}),
  };
}

function versionOf(summary: VersionSummary): WorkerDeploymentVersionState {
  const createdAt = optionalTsToDate(summary.createTime);
  const lastCurrentAt = optionalTsToDate(summary.lastCurrentTime);
  const drainedAt =
    summary.drainageInfo?.status === VersionDrainageStatus.VERSION_DRAINAGE_STATUS_DRAINED
      ? optionalTsToDate(summary.drainageInfo.lastChangedTime)
      : undefined;
  return {
    buildId: summary.deploymentVersion?.buildId ?? '',
    status: statusOf(summary.status),
    ...(createdAt ? { createdAt } : {}),
    ...(lastCurrentAt ? { lastCurrentAt } : {}),
    ...(drainedAt ? { drainedAt } : {}),
  };
}

function statusOf(
  status: temporal.api.enums.v1.WorkerDeploymentVersionStatus | null | undefined,
): VersionStatus {
  switch (status) {
    case WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_CURRENT:
      return 'current';
    case WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_RAMPING:
      return 'ramping';
    case WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINING:
      return 'draining';
    case WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_DRAINED:
      return 'drained';
    case WorkerDeploymentVersionStatus.WORKER_DEPLOYMENT_VERSION_STATUS_INACTIVE:
      return 'inactive';
    default:
      return 'created';
  }
}
