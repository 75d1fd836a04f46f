import { isGrpcServiceError } from '@temporalio/client';

const RESOURCE_EXHAUSTED = 8;

/** The server refused an update because one workflow has `history.maxInFlightUpdates` in flight: ask again soon. */
export function isServerBusy(error: unknown): boolean {
  for (let cause = error; cause; cause = (cause as { cause?: unknown }).cause) {
    if (isGrpcServiceError(cause) && cause.code === RESOURCE_EXHAUSTED) return true;
  }
  return false;
}
