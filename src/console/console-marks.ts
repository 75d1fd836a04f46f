import { type Client, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time';

/**
 * What every gateway replica must agree on about the console: that a sign-in link was used, that a
 * session was signed out. Each is a mark set once, remembered at least until it no longer matters
 * (the link or session has expired by then), and forgotten after.
 */
export interface ConsoleMarks {
  /**
   * Sets mark `key`, to be remembered at least until `until` (ms since the epoch): true for the one
   * caller, of every replica, who set it first; false for every other while it is remembered.
   */
  set(key: string, until: number): Promise<boolean>;
  /** Whether mark `key` is set. */
  isSet(key: string): Promise<boolean>;
  /** How long a mark set now is remembered at least, in ms: no link or session may outlive it. */
  rememberedMs(): Promise<number>;
}

/** The workflow type, and the task queue no worker polls, of the marks. */
export const MARK_WORKFLOW_TYPE = 'durableAgentConsoleMark';
export const MARK_TASK_QUEUE = 'durable-agent-console-marks';
/** No conversation id has a `/`, so no conversation can take a mark's id, nor a mark a conversation's. */
const MARK_ID_PREFIX = 'durable-agent-console/';

/**
 * Marks kept by the Temporal server the replicas share, as workflow ids: setting a mark starts a
 * workflow with that id, refusing a duplicate (Temporal answers atomically who was first), and
 * terminates it at once; the namespace keeps the closed workflow for its retention, then deletes
 * it, which is what forgets the mark. Reading one is a `describe()` at the frontend.
 *
 * Chosen over an entity workflow that the agent workers would run (a set of marks with their
 * expiries, set by update and read by query): that needs a worker for every sign-in and every
 * console request (a gateway with no worker running could sign nobody in), costs a worker round
 * trip where this costs one frontend call, and is one more long-lived workflow to continue as new.
 * The price here is one terminated workflow per sign-in and per sign-out in the namespace's list
 * (type `durableAgentConsoleMark`, id `durable-agent-console/...`); `durable-agent list` and the
 * console list conversations only.
 */
export class TemporalConsoleMarks implements ConsoleMarks {
  private retentionMs?: Promise<number>;

  constructor(private readonly client: Client) {}

  async set(key: string, until: number): Promise<boolean> {
    let handle;
    try {
      handle = await this.client.workflow.start(MARK_WORKFLOW_TYPE, {
        workflowId: MARK_ID_PREFIX + key,
        taskQueue: MARK_TASK_QUEUE,
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        workflowIdConflictPolicy: 'FAIL',
        // Should the termination below be lost, the mark still closes by itself once it no longer
        // matters, and the namespace's retention still forgets it.
        workflowExecutionTimeout: Math.max(1_000, until - Date.now()),
        staticSummary: `console mark ${key.slice(0, key.indexOf('/'))}`,
      });
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) return false;
      throw error;
    }
    // The mark is set once started; closing it at once is what lets retention forget it.
    await handle.terminate('a console mark needs no worker').catch(() => undefined);
    return true;
  }

  async isSet(key: string): Promise<boolean> {
    try {
      await this.client.workflow.getHandle(MARK_ID_PREFIX + key).describe();
      return true;
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return false;
      throw error;
    }
  }

  /** The namespace's retention, read once: a closed mark is kept at least that long. */
  rememberedMs(): Promise<number> {
    this.retentionMs ??= this.client.workflowService
      .describeNamespace({ namespace: this.client.options.namespace })
      .then((described) => tsToMs(described.config?.workflowExecutionRetentionTtl))
      .catch((error: unknown) => {
        this.retentionMs = undefined;
        throw error;
      });
    return this.retentionMs;
  }
}
