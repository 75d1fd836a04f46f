/** What a Worker Deployment is routing, as `deploy list` and `deploy describe` show it. */
export interface WorkerDeploymentListing {
  /** The deployment's name (AGENT_DEPLOYMENT_NAME of its workers). */
  name: string;
  /** The build new conversations start on; absent while unversioned workers take them. */
  current?: string;
  /** The build that takes `percent` of new conversations instead. */
  ramping?: {
    /** The ramping build. */
    buildId: string;
    /** The share of new conversations it takes, 0 to 100. */
    percent: number;
  };
}

/**
 * A version's part in routing, as Temporal reports it: `current` and `ramping` take new work;
 * `draining` still has open conversations pinned to it (its workers must keep running);
 * `drained` has none (its workers may stop); `inactive` was never current nor ramping, `created`
 * has pollers and nothing more.
 */
export type VersionStatus = 'created' | 'inactive' | 'current' | 'ramping' | 'draining' | 'drained';

/** One version (build id) of a worker deployment and its status. */
export interface WorkerDeploymentVersionState {
  /** The version's build id. */
  buildId: string;
  /** Its part in routing now. */
  status: VersionStatus;
  /** When Temporal first saw it. */
  createdAt?: Date;
  /** When it last became current: `rollback` goes back to the non-current build that did so last. */
  lastCurrentAt?: Date;
  /** When Temporal found no open conversation pinned to it any more. */
  drainedAt?: Date;
  /** While draining: the open executions pinned to it, counted at the time of asking. */
  pinnedOpen?: number;
}

/** A Worker Deployment with every version of it, as `deploy describe` shows it. */
export interface WorkerDeploymentState extends WorkerDeploymentListing {
  /** Newest first. */
  versions: WorkerDeploymentVersionState[];
}

/** What making a build current did. */
export interface CurrentChange {
  /** The build that was current before. */
  previous?: string;
  /** Whether the new routing had reached every task queue when the change returned (it goes on regardless). */
  routed: boolean;
  /** Open conversations pinned to the previous build (as visibility counts them), each moving at its next idle point. */
  pinned: number;
}

/** No Worker Deployment has this name in the namespace (no versioned worker has polled with it). */
export class DeploymentNotFoundError extends Error {
  constructor(
    /** The name asked for. */
    readonly deploymentName: string,
  ) {
    super(
      `worker deployment ${deploymentName} not found (no worker with AGENT_DEPLOYMENT_NAME=${deploymentName} has polled)`,
    );
    this.name = 'DeploymentNotFoundError';
  }
}

/** `rollback` found no build that was current before the present one. */
export class NoEarlierVersionError extends Error {
  constructor(
    /** The deployment. */
    readonly deploymentName: string,
    /** Its current build, if any. */
    readonly current: string | undefined,
  ) {
    super(
      `worker deployment ${deploymentName} has no earlier current build to go back to${current ? ` (current: ${current})` : ''}`,
    );
    this.name = 'NoEarlierVersionError';
  }
}
