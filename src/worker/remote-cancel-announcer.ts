import type { NativeConnection } from '@temporalio/worker';

/** The push endpoint a worker's identity names (`<pid>@<host> <url>`), if it names one. */
export function liveUrlOfIdentity(identity: string | null | undefined): string | undefined {
  const match = /\s(https?:\/\/\S+)$/.exec(identity ?? '');
  return match?.[1];
}

/** A worker identity that names its push endpoint after the SDK's usual `<pid>@<host>`. */
export function identityWithLiveUrl(base: string, url: string): string {
  return `${base} ${url}`;
}

const KNOCK_TIMEOUT_MS = 2_000;

/**
 * Tells the workers running a run's activities in other processes that its workflow has just asked
 * for some to stop (steer, abort): it reads which workers took the run's pending activities and
 * knocks on each one's push endpoint, which makes its activities ask the server at once instead of
 * at their next heartbeat. Best effort and fire-and-forget: the heartbeat still brings the request.
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
    const urls = new Set(
      (description.pendingActivities ?? []).flatMap((activity) => {
        const url = liveUrlOfIdentity(activity.lastWorkerIdentity);
        return url && url !== ownUrl ? [url] : [];
      }),
    );
    await Promise.all(
      [...urls].map((url) =>
        fetch(`${url}/cancel-requested/${encodeURIComponent(runId)}`, {
          method: 'POST',
          signal: AbortSignal.timeout(KNOCK_TIMEOUT_MS),
        }).catch(() => undefined),
      ),
    );
  })().catch(() => undefined);
}
