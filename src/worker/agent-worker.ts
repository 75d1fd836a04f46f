import type { Worker } from '@temporalio/worker';

/**
 * A durable-agent worker: the Temporal worker of the conversation task queue, and one activity-only
 * worker per worker-bound tool table (background processes) on that table's own queue, so calls
 * naming a background process reach the process that holds it. They run, stop and fail together.
 */
export class AgentWorker {
  constructor(
    /** The worker of the conversation task queue: workflows, model calls and tools. */
    readonly main: Worker,
    private readonly bound: readonly Worker[] = [],
    /** Let go of once every worker has stopped (the push endpoint). */
    private readonly afterStop: () => Promise<void> = async () => {},
  ) {}

  private get all(): Worker[] {
    return [this.main, ...this.bound];
  }

  /** Until shut down, or one of them fails (the others are then shut down too). */
  async run(): Promise<void> {
    const runs = this.all.map((worker) => worker.run().finally(() => this.shutdown()));
    const outcomes = await Promise.allSettled(runs);
    await this.afterStop().catch(() => undefined);
    const failed = outcomes.find(
      (outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected',
    );
    if (failed) throw failed.reason;
  }

  /** Runs until `work` settles, then shuts down and returns its value. */
  async runUntil<T>(work: Promise<T> | (() => Promise<T>)): Promise<T> {
    const running = this.run();
    try {
      return await (typeof work === 'function' ? work() : work);
    } finally {
      this.shutdown();
      await running;
    }
  }

  /** Stops taking work; running activities get the shutdown grace time. */
  shutdown(): void {
    for (const worker of this.all) if (worker.getState() === 'RUNNING') worker.shutdown();
  }

  getState(): ReturnType<Worker['getState']> {
    return this.main.getState();
  }

  /** Activities running now, on all of its queues. */
  inFlightActivities(): number {
    return this.all.reduce((sum, worker) => sum + worker.getStatus().numInFlightActivities, 0);
  }
}
