import type { Sinks } from '@temporalio/workflow';

/**
 * How a workflow tells the worker process running it that it has just asked for some of its
 * activities to stop (steer, abort), so those running in the same process can stop without waiting
 * for their next heartbeat. Not called on replay.
 */
export interface CancelRequestSinks extends Sinks {
  cancelRequests: {
    requested(): void;
  };
}
