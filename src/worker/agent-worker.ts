import type { Worker } from '@temporalio/worker';
import type { DurableAgentPlugin } from './agent-plugin';

/**
 * A durable-agent worker: the Temporal worker of the conversation task queue and, through the
 * plugin, one activity-only worker per worker-bound tool table (background processes) on that
 * table's own queue, so calls naming a background process reach the process that holds it. They
 * run, stop and fail together.
 */
export class AgentWorker {
  constructor(
    /** The worker of the conversation task queue: workflows, model calls and tools. */
    readonly main: Worker,
    private readonly plugin: DurableAgentPlugin,
  ) {}

  /** Until shut down, or one of its workers fails (the others are then shut down too). */
  run(): Promise<void> {
    return this.main.run();
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
    this.plugin.shutdownCompanions(this.main);
    if (this.main.getState() === 'RUNNING') this.main.shutdown();
  }

  /** The state of the worker of the conversation task queue (`RUNNING`, `STOPPED`, …). */
  getState(): ReturnType<Worker['getState']> {
    return this.main.getState();
  }

  /**
   * Whether it takes work now: running, with its task queue's pollers polling. False before it
   * runs, and from the moment it is told to shut down (while it drains).
   */
  isPolling(): boolean {
    const status = this.main.getStatus();
    return (
      status.runState === 'RUNNING' &&
      status.workflowPollerState === 'POLLING' &&
      status.activityPollerState === 'POLLING'
    );
  }

  /** Activities running now, on all of its queues. */
  inFlightActivities(): number {
    return this.plugin.inFlightActivities(this.main);
  }
}
