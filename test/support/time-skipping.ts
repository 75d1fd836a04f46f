import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { Client, type WorkflowClientInterceptor } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, type InjectedSinks, Runtime, Worker } from '@temporalio/worker';
import type { AgentActivities } from '../../src/activities/create-activities';
import { AgentClient } from '../../src/client/agent-client';
import type { CancelRequestSinks } from '../../src/shared/cancel-request-sink';
import { bundleAgentWorkflows } from '../../src/worker/workflow-bundle';
import { inCi } from './in-ci';
import { missingCommands, startTestServer, whatIsMissing } from './time-skipping-server';

/**
 * Workflow tests on Temporal's time-skipping test server (time-skipping-server.ts): the real
 * conversation workflow, mocked activities (mocked-activities.ts), and a clock the test moves, so
 * an hour's timeout is tested in milliseconds.
 */

export interface TimeSkippingHarness {
  env: TestWorkflowEnvironment;
  /** For handles: awaiting a workflow's result lets the server skip time (TimeSkippingWorkflowClient). */
  client: Client;
  /**
   * Runs `body` while a worker with the real conversation workflow and `activities` polls a task
   * queue of its own; the worker stops when `body` settles. Conversations started through `agent`
   * that are still open after the test are terminated, so their timers cannot move the next test's
   * clock; one that failed has its failure added to the test's error.
   */
  withWorker<T>(
    activities: AgentActivities,
    body: (worker: { agent: AgentClient; taskQueue: string }) => Promise<T>,
  ): Promise<T>;
}

/**
 * A `describe` whose tests share one time-skipping test server, started before them and stopped
 * after. Where java or mvn is missing the block is skipped with a warning, except in CI (inCi()),
 * where it fails saying what is missing.
 */
export function describeWithTimeSkipping(
  name: string,
  body: (harness: () => TimeSkippingHarness) => void,
): void {
  const missing = missingCommands();
  if (missing.length > 0 && !inCi()) {
    console.warn(`skipping "${name}": ${whatIsMissing(missing)}`);
    describe.skip(name, () => body(() => unavailable()));
    return;
  }
  describe(name, () => {
    let harness: Harness | undefined;
    // The server is fetched by the global setup; bundling (where no bundle was handed over) and a
    // JVM's start on a busy machine still take a while.
    beforeAll(async () => {
      if (missing.length > 0) throw new Error(whatIsMissing(missing));
      quietRuntime();
      // The bundle first: bundling competes for the CPU with a JVM the SDK gives 5 s to start.
      const code = await workflowCode();
      harness = new Harness(await startTestServer(), code);
    }, 180_000);
    // Also after a test that timed out, whose worker and conversations were left running.
    afterEach(() => harness?.cleanUp());
    afterAll(() => harness?.env.teardown());
    body(() => harness ?? unavailable());
  });
}

class Harness implements TimeSkippingHarness {
  readonly client: Client;
  /** Conversations started through a worker's `agent`, until cleaned up. */
  private readonly started = new Set<string>();
  private readonly running = new Set<Worker>();

  constructor(
    readonly env: TestWorkflowEnvironment,
    private readonly code: string,
  ) {
    this.client = env.client;
  }

  async withWorker<T>(
    activities: AgentActivities,
    body: (worker: { agent: AgentClient; taskQueue: string }) => Promise<T>,
  ): Promise<T> {
    const taskQueue = `time-skipping-${randomUUID()}`;
    const worker = await Worker.create({
      connection: this.env.nativeConnection,
      namespace: this.env.namespace ?? 'default',
      taskQueue,
      workflowBundle: { code: this.code },
      activities,
      sinks: noCancelRequestSinks,
      // A bug in workflow code fails the conversation at once instead of retrying its task forever.
      workflowFailureErrorTypes: { '*': ['Error'] },
      shutdownGraceTime: '1 second',
    });
    this.running.add(worker);
    const agent = new AgentClient(this.trackingClient(), taskQueue);
    try {
      return await worker.runUntil(body({ agent, taskQueue }));
    } catch (error) {
      const failures = await this.failures();
      if (failures.length > 0 && error instanceof Error) error.message += `\n${failures.join('\n')}`;
      throw error;
    } finally {
      this.running.delete(worker);
    }
  }

  /** Terminates the conversations still open and stops the workers still running. */
  async cleanUp(): Promise<void> {
    for (const id of this.started) {
      const handle = this.client.workflow.getHandle(id);
      const description = await handle.describe().catch(() => undefined);
      if (description?.status.name === 'RUNNING') await handle.terminate('the test is over');
    }
    this.started.clear();
    for (const worker of this.running) {
      if (worker.getState() === 'RUNNING') worker.shutdown();
    }
    this.running.clear();
  }

  /** Why each conversation started in this test that failed, failed. */
  private async failures(): Promise<string[]> {
    const failures: string[] = [];
    for (const id of this.started) {
      const handle = this.client.workflow.getHandle(id);
      const description = await handle.describe().catch(() => undefined);
      if (description?.status.name !== 'FAILED') continue;
      const failure = await handle.result().then(
        () => undefined,
        (error: unknown) =>
          error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error),
      );
      failures.push(`conversation ${id} failed: ${failure}`);
    }
    return failures;
  }

  /** A client (no time skipping of its own) that remembers which conversations it started. */
  private trackingClient(): Client {
    const started = this.started;
    const remember: WorkflowClientInterceptor = {
      start: (input, next) => {
        started.add(input.options.workflowId);
        return next(input);
      },
      signalWithStart: (input, next) => {
        started.add(input.options.workflowId);
        return next(input);
      },
    };
    return new Client({
      connection: this.env.connection,
      namespace: this.env.namespace ?? 'default',
      interceptors: { workflow: [remember] },
    });
  }
}

function unavailable(): never {
  throw new Error('the time-skipping test server is only available inside tests');
}

/** The bundle the global setup built for this test run, else the workflows bundled now. */
async function workflowCode(): Promise<string> {
  const built = process.env.TEST_WORKFLOW_BUNDLE;
  return built && existsSync(built) ? readFile(built, 'utf8') : bundleAgentWorkflows();
}

/** The workflow tells the worker's own activities of cancel requests through a sink; the mocks need not hear. */
const noCancelRequestSinks: InjectedSinks<CancelRequestSinks> = {
  cancelRequests: { requested: { fn: () => undefined, callDuringReplay: false } },
};

function quietRuntime(): void {
  try {
    // Errors only, the native side's too: the test server lacks capabilities a worker warns about.
    Runtime.install({
      logger: new DefaultLogger('ERROR'),
      telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, forward: {} } },
    });
  } catch {
    // Installed already by an earlier test file in this Jest worker.
  }
}
