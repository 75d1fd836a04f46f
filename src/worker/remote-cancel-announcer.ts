import type { NativeConnection } from '@temporalio/worker';
import { type LiveEndpointAddress, requestLiveEndpoint } from '../client/live-endpoint-request';

const IDENTITY_ENDPOINT = /\s(https?:\/\/\S+)(?:\s+sha256:([0-9a-f]{64}))?$/;

/** The push endpoint a worker's identity names (`<pid>@<host> <url> [sha256:<pin>]`), if it names one. */
export function liveEndpointOfIdentity(identity: string | null | undefined): LiveEndpointAddress | undefined {
  const match = IDENTITY_ENDPOINT.exec(identity ?? '');
  if (!match) return undefined;
  return { url: match[1]!, ...(match[2] ? { pin: match[2] } : {}) };
}

/**
 * A worker identity that names its push endpoint after the SDK's usual `<pid>@<host>`, and the pin
 * of the certificate it serves when it made its own. Workers before pins read no endpoint from an
 * identity with one (the URL is not last), so they do not knock: the heartbeat still tells.
 */
export function identityWithLiveEndpoint(base: string, endpoint: LiveEndpointAddress): string {
  return `${base} ${endpoint.url}${endpoint.pin ? ` sha256:${endpoint.pin}` : ''}`;
}

const KNOCK_TIMEOUT_MS = 2_000;

/**
 * Tells the workers running a run's activities in other processes that its workflow has just asked
 * for some to stop (steer, abort): it reads which workers took the run's pending activities and
 * knocks on each one's push endpoint (checking its certificate as watchers do), which makes its
 * activities ask the server at once instead of at their next heartbeat. Best effort and
 * fire-and-forget: the heartbeat still brings the request.
 */
export function announceCancelRequest(
  connection: Pick<NativeConnection, 'workflowService'>,
  namespace: string,
  ownUrl: string,
  workflowId: string,
  runId: string,
): void {
  void (async () => {
    const description = await connection.workflowService.describeWorkflowExecution({
      namespace,
      execution: { workflowId, runId },
    });
    const endpoints = new Map<string, LiveEndpointAddress>();
    for (const activity of description.pendingActivities ?? []) {
      const endpoint = liveEndpointOfIdentity(activity.lastWorkerIdentity);
      if (endpoint && endpoint.url !== ownUrl)
        endpoints.set(`${endpoint.url} ${endpoint.pin ?? ''}`, endpoint);
    }
    await Promise.all(
      [...endpoints.values()].map(async (endpoint) => {
        const response = await requestLiveEndpoint(
          { ...endpoint, url: `${endpoint.url}/cancel-requested/${encodeURIComponent(runId)}` },
          { method: 'POST', signal: AbortSignal.timeout(KNOCK_TIMEOUT_MS) },
        ).catch(() => undefined);
        response?.resume();
      }),
    );
  })().catch(() => undefined);
}
