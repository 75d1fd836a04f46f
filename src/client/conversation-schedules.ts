import { conversationSummary } from '../shared/activity-summary';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Client,
  ScheduleAlreadyRunning,
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
} from '@temporalio/client';
import { CONVERSATION_WORKFLOW_TYPE, DEFAULT_TASK_QUEUE } from '../shared/constants';
import { WORKFLOW_TASK_TIMEOUT_MS } from '../shared/workflow-task-bounds';
import { type ConversationStartInput, UserMessageInputSchema } from '../shared/conversation-api';
import { type ConversationOptionsInput, ConversationOptionsSchema } from '../shared/conversation-options';
import { assertConversationId } from '../shared/ids';
import { ScheduleExistsError, ScheduleMissingError, invalidInput } from '../shared/conversation-errors';

/** Options of `ConversationSchedules.create`: when to start conversations, with which prompt and options. */
export interface ScheduleConversationOptions {
  /** A new `sched-…` id when absent. Each conversation it starts is this id plus the time it was started. */
  scheduleId?: string;
  /** A cron expression (UTC), e.g. `0 9 * * 1-5`. */
  cron: string;
  /** The first message of every conversation the schedule starts. */
  prompt: string;
  /** Options of those conversations; `idleTimeoutMs` defaults to DEFAULT_SCHEDULED_IDLE_TIMEOUT_MS. */
  options?: ConversationOptionsInput;
}

/**
 * Scheduled conversations would otherwise stay open forever: each ends after a day without a
 * message, which leaves time to follow one up with `send`.
 */
export const DEFAULT_SCHEDULED_IDLE_TIMEOUT_MS = 24 * 60 * 60 * 1_000;

/** One schedule in `ConversationSchedules.list`. */
export interface ConversationScheduleListing {
  /** The schedule's id. */
  scheduleId: string;
  /** Its cron expression (UTC), when it has one. */
  cron?: string;
  /** The first message of each conversation it starts. */
  prompt?: string;
  /** Whether it is paused (it starts nothing while paused). */
  paused: boolean;
  /** When it starts the next conversation; absent when none is due. */
  nextStartAt?: Date;
  /** Conversations it started most recently, oldest first (Temporal keeps the latest few). */
  recentConversations: string[];
}

/** The memo a schedule carries so that `list` can show what it does. */
interface ScheduleMemo {
  cron?: string;
  prompt?: string;
}

/** Conversations started on a Temporal schedule, each beginning with the same prompt. */
export class ConversationSchedules {
  constructor(
    private readonly client: Client,
    private readonly taskQueue: string = DEFAULT_TASK_QUEUE,
  ) {}

  /** Creates the schedule; returns its id. Refuses an id already used by a schedule (ScheduleExistsError). */
  async create(schedule: ScheduleConversationOptions): Promise<string> {
    const scheduleId = assertConversationId(schedule.scheduleId ?? `sched-${randomUUID().slice(0, 8)}`);
    const message = UserMessageInputSchema.safeParse({ text: schedule.prompt, messageId: randomUUID() });
    if (!message.success) throw invalidInput('prompt', message.error);
    const options = ConversationOptionsSchema.safeParse({
      idleTimeoutMs: DEFAULT_SCHEDULED_IDLE_TIMEOUT_MS,
      ...schedule.options,
    });
    if (!options.success) throw invalidInput('conversation options', options.error);
    const input: ConversationStartInput = { options: options.data, initialMessage: message.data };
    const memo: ScheduleMemo = { cron: schedule.cron, prompt: schedule.prompt };
    try {
      await this.client.schedule.create({
        scheduleId,
        spec: { cronExpressions: [schedule.cron] },
        action: {
          type: 'startWorkflow',
          workflowType: CONVERSATION_WORKFLOW_TYPE,
          // Temporal appends the time of each start, so every conversation gets its own id.
          workflowId: scheduleId,
          taskQueue: this.taskQueue,
          args: [input],
          workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT_MS,
          staticSummary: conversationSummary(schedule.prompt),
        },
        // Conversations stay open after answering: with the default (skip while one runs) the
        // schedule would start only the first.
        policies: { overlap: ScheduleOverlapPolicy.ALLOW_ALL },
        memo: { ...memo },
      });
    } catch (error) {
      if (error instanceof ScheduleAlreadyRunning) throw new ScheduleExistsError(scheduleId);
      throw error;
    }
    return scheduleId;
  }

  /** Schedules that start conversations (of any task queue), from Temporal visibility. */
  async *list(): AsyncGenerator<ConversationScheduleListing> {
    for await (const summary of this.client.schedule.list()) {
      if (summary.action?.workflowType !== CONVERSATION_WORKFLOW_TYPE) continue;
      const memo = (summary.memo ?? {}) as ScheduleMemo;
      const nextStartAt = summary.info.nextActionTimes[0];
      yield {
        scheduleId: summary.scheduleId,
        ...(typeof memo.cron === 'string' ? { cron: memo.cron } : {}),
        ...(typeof memo.prompt === 'string' ? { prompt: memo.prompt } : {}),
        paused: summary.state.paused,
        ...(nextStartAt ? { nextStartAt } : {}),
        recentConversations: summary.info.recentActions.map((action) => action.action.workflow.workflowId),
      };
    }
  }

  /** The conversations the schedule started most recently, oldest first. */
  async recentConversations(scheduleId: string): Promise<string[]> {
    const description = await this.explain(scheduleId, () =>
      this.client.schedule.getHandle(scheduleId).describe(),
    );
    return description.info.recentActions.map((action) => action.action.workflow.workflowId);
  }

  /**
   * Starts a conversation now, besides the times the schedule names. Temporal names each one by the
   * second it was scheduled for, and refuses a second start in the same second while the first
   * conversation is open (over and over, holding up the schedule), so this waits until the second of
   * the schedule's newest start has passed: at most a second, by this machine's clock.
   */
  async trigger(scheduleId: string): Promise<void> {
    const handle = this.client.schedule.getHandle(scheduleId);
    const newest = (await this.explain(scheduleId, () => handle.describe())).info.recentActions.at(-1);
    if (newest) {
      const nextSecond = Math.floor(newest.scheduledAt.getTime() / 1_000) * 1_000 + 1_000;
      const wait = nextSecond - Date.now();
      if (wait > 0) await sleep(wait);
    }
    await this.explain(scheduleId, () => handle.trigger(ScheduleOverlapPolicy.ALLOW_ALL));
  }

  /** Deletes the schedule; the conversations it started go on. */
  async delete(scheduleId: string): Promise<void> {
    await this.explain(scheduleId, () => this.client.schedule.getHandle(scheduleId).delete());
  }

  /** Temporal's "no such schedule" as ours. */
  private async explain<T>(scheduleId: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof ScheduleNotFoundError) throw new ScheduleMissingError(scheduleId);
      throw error;
    }
  }
}
