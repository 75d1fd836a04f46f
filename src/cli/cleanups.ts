import { printable } from '../shared/printable-text';

/**
 * Lines for the person at the terminal; stdout is kept for answers and --json events. A line may
 * quote a model, a tool or a failure, so only its printable text is written.
 */
export const log = (line: string): void => {
  process.stderr.write(`${printable(line)}\n`);
};

type Cleanup = () => Promise<void>;

/** What a command started and must stop on its way out, run once, in order, however it ends. */
export class Cleanups {
  private readonly steps: Cleanup[] = [];
  private running: Promise<void> | undefined;

  /** Runs before everything registered so far (a worker stops before its server). */
  first(step: Cleanup): void {
    this.steps.unshift(step);
  }

  last(step: Cleanup): void {
    this.steps.push(step);
  }

  /**
   * Runs every step. A second caller while they run (the command ending because a signal's cleanup
   * stopped its worker) waits for the same run, so the process never exits half-way through it,
   * leaving, say, the embedded server running.
   */
  runAll(): Promise<void> {
    this.running ??= (async () => {
      for (let step = this.steps.shift(); step; step = this.steps.shift()) {
        await step().catch((error: Error) => log(`cleanup: ${error.message}`));
      }
    })().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }
}
