/** Lines for the person at the terminal; stdout is kept for answers and --json events. */
export const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

type Cleanup = () => Promise<void>;

/** What a command started and must stop on its way out, run once, in order, however it ends. */
export class Cleanups {
  private readonly steps: Cleanup[] = [];

  /** Runs before everything registered so far (a worker stops before its server). */
  first(step: Cleanup): void {
    this.steps.unshift(step);
  }

  last(step: Cleanup): void {
    this.steps.push(step);
  }

  async runAll(): Promise<void> {
    for (const step of this.steps.splice(0)) {
      await step().catch((error: Error) => log(`cleanup: ${error.message}`));
    }
  }
}
