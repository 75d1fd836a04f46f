import type { Context } from '@temporalio/activity';

/**
 * Heartbeats on a timer as well as on every update, so an activity that is quietly waiting (for a
 * first token, for a slow command) still proves its worker is alive and still hears cancellation.
 * The latest details are re-sent each time, so watchers always see the newest progress. The first
 * heartbeat waits for the first tick or update: most calls end sooner and need none (each is a
 * write to the workflow's state on the server, which 64 parallel calls otherwise queue behind). A
 * local activity has no heartbeats (the server knows nothing of it; its cancellation comes from its
 * own worker), so one sends none.
 */
export class Heartbeater<TDetails> {
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly context: Context,
    private details: TDetails,
  ) {
    const timeoutMs = context.info.heartbeatTimeoutMs ?? 30_000;
    this.timer = context.info.isLocal
      ? undefined
      : setInterval(() => this.context.heartbeat(this.details), Math.min(1_000, timeoutMs / 3));
  }

  update(details: TDetails): void {
    this.details = details;
    if (!this.context.info.isLocal) this.context.heartbeat(details);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
