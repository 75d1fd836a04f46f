import { CancellationScope } from '@temporalio/workflow';

/**
 * Notifications under way (webhook deliveries, A2A push notifications), each an activity that
 * retries on its own. Not waited for as they go; the conversation waits for those still going
 * before it continues as new or ends, so none is lost.
 */
export class InFlightDeliveries {
  private readonly inFlight = new Set<Promise<unknown>>();

  /** Starts a delivery outside any run's scope: a steer or abort does not cancel a notice already due. */
  start(deliver: () => Promise<unknown>): void {
    const delivery: Promise<unknown> = CancellationScope.nonCancellable(deliver)
      .catch(() => undefined)
      .finally(() => this.inFlight.delete(delivery));
    this.inFlight.add(delivery);
  }

  /** Waits for every delivery still going (each ends delivered or given up after its retries). */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }
}
