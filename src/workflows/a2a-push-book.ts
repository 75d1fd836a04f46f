import { workflowInfo } from '@temporalio/workflow';
import type { A2ATaskStatus } from '../shared/a2a';
import {
  A2A_NOTIFICATION_ID_KEY,
  type A2APushConfig,
  type A2APushConfigChange,
  type A2APushConfigReceipt,
  MAX_PUSH_CONFIGS_PER_TASK,
  MAX_PUSH_TASKS,
} from '../shared/a2a-push';
import { type TaskRef, approvalParts, finalStatusOf, statusOf } from '../shared/a2a-task-parts';
import type { PendingApproval } from '../shared/approvals';
import type { AgentEvent } from '../shared/events';
import { a2aPushActivities } from './activity-proxies';
import type { EventLog } from './event-log';
import type { InFlightDeliveries } from './in-flight-deliveries';
import { workflowTime } from './workflow-time';

/** One configuration of a task: whose, its number in the conversation, and the last state it was sent. */
interface KeptConfig {
  owner: string;
  /** Never reused in the conversation: part of every notification id sent to it. */
  serial: number;
  config: A2APushConfig;
  /** The key of the last state sent to it (`working`, `wait-…`, `end`, `ended`). */
  sent?: string;
}

interface PushTask {
  messageId: string;
  /** The run that took the task's message (or that the message steered), once known. */
  run?: number;
  configs: KeptConfig[];
}

/** What continue-as-new hands on: the tasks with configurations and the next serial number. */
export interface CarriedA2APush {
  tasks: PushTask[];
  nextSerial: number;
}

/** A task's state as a notification says it; `key` changes when the state does. */
interface PushState {
  key: string;
  status: A2ATaskStatus;
  final: boolean;
}

/**
 * The conversation's A2A push notification configurations, by task, and their notifications: at
 * each change of a task's state (working, input-required, and its end: completed, canceled, failed)
 * every configuration of the task is sent a status update, once per state, through an activity that
 * retries with backoff. A configuration set later is sent the state the task is in at once, so one
 * set just after its message was sent misses nothing.
 */
export class A2APushBook {
  private readonly tasks: Map<string, PushTask>;
  private nextSerial: number;
  /** Notification ids start with the conversation and this execution, so none repeats after a reset. */
  private readonly idPrefix: string;
  private conversationOver = false;

  constructor(
    private readonly conversationId: string,
    private readonly events: EventLog,
    private readonly pending: () => readonly PendingApproval[],
    private readonly deliveries: InFlightDeliveries,
    carried?: CarriedA2APush,
  ) {
    this.tasks = new Map((carried?.tasks ?? []).map((task) => [task.messageId, task]));
    this.nextSerial = carried?.nextSerial ?? 1;
    this.idPrefix = `${conversationId}/${workflowInfo().runId}`;
  }

  /** Why `change` cannot be made, or undefined. */
  refusal(change: A2APushConfigChange): string | undefined {
    const task = this.tasks.get(change.messageId);
    const index = task
      ? this.indexOf(task, change.owner, change.op === 'set' ? change.config.id : change.id)
      : -1;
    if (change.op === 'delete')
      return index === -1 ? `task has no push notification config ${JSON.stringify(change.id)}` : undefined;
    if (index === -1 && (task?.configs.length ?? 0) >= MAX_PUSH_CONFIGS_PER_TASK)
      return `a task has at most ${MAX_PUSH_CONFIGS_PER_TASK} push notification configs`;
    if (!task && this.tasks.size >= MAX_PUSH_TASKS && !this.oldestEnded())
      return `at most ${MAX_PUSH_TASKS} tasks of a context have push notification configs while they run`;
    return undefined;
  }

  /** Makes a change `refusal` allowed. A configuration set is sent the task's state at once. */
  change(change: A2APushConfigChange): A2APushConfigReceipt {
    let task = this.tasks.get(change.messageId);
    if (change.op === 'delete') {
      if (!task) return { existed: false };
      const index = this.indexOf(task, change.owner, change.id);
      if (index !== -1) task.configs.splice(index, 1);
      if (task.configs.length === 0) this.tasks.delete(task.messageId);
      return { existed: index !== -1 };
    }
    if (!task) {
      if (this.tasks.size >= MAX_PUSH_TASKS) this.tasks.delete(this.oldestEnded()!.messageId);
      task = { messageId: change.messageId, configs: [] };
      for (const event of this.events.all()) learnRun(task, event);
      this.tasks.set(task.messageId, task);
    }
    const index = this.indexOf(task, change.owner, change.config.id);
    const kept: KeptConfig = { owner: change.owner, serial: this.nextSerial++, config: change.config };
    if (index === -1) task.configs.push(kept);
    else task.configs[index] = kept;
    const state = this.stateOf(task, this.finishedOf(task));
    if (state) this.send(task, state, this.events.lastSeq, [kept]);
    return { existed: index !== -1 };
  }

  /** The task's configurations set by `owner`. */
  configsOf(messageId: string, owner: string): A2APushConfig[] {
    return (this.tasks.get(messageId)?.configs ?? [])
      .filter((kept) => kept.owner === owner)
      .map((kept) => kept.config);
  }

  /** Called for every recorded event: a task whose state it changes is notified. */
  eventRecorded(event: AgentEvent): void {
    for (const task of this.tasks.values()) {
      if (isOver(task)) continue;
      learnRun(task, event);
      if (task.run === undefined) continue;
      const finished = event.type === 'run_finished' && event.run === task.run ? event : undefined;
      if (!finished && event.run !== task.run) continue;
      const state = this.stateOf(task, finished);
      if (state) this.send(task, state, event.seq, task.configs);
    }
  }

  /** The conversation ended: a task it had not finished has failed. */
  conversationEnded(): void {
    this.conversationOver = true;
    for (const task of this.tasks.values()) {
      if (isOver(task)) continue;
      const state = this.stateOf(task, undefined);
      if (state) this.send(task, state, this.events.lastSeq, task.configs);
    }
  }

  carry(): CarriedA2APush | undefined {
    if (this.tasks.size === 0) return undefined;
    return { tasks: [...this.tasks.values()], nextSerial: this.nextSerial };
  }

  private indexOf(task: PushTask, owner: string, id: string): number {
    return task.configs.findIndex((kept) => kept.owner === owner && kept.config.id === id);
  }

  private oldestEnded(): PushTask | undefined {
    for (const task of this.tasks.values()) if (isOver(task)) return task;
    return undefined;
  }

  /** The `run_finished` of the task's run, among the kept events. */
  private finishedOf(task: PushTask): Extract<AgentEvent, { type: 'run_finished' }> | undefined {
    if (task.run === undefined) return undefined;
    return this.events
      .all()
      .find(
        (event): event is Extract<AgentEvent, { type: 'run_finished' }> =>
          event.type === 'run_finished' && event.run === task.run,
      );
  }

  /** The task's state now; undefined while its message waits for a run (nothing to tell yet). */
  private stateOf(
    task: PushTask,
    finished: Extract<AgentEvent, { type: 'run_finished' }> | undefined,
  ): PushState | undefined {
    const ref: TaskRef = {
      taskId: `${this.conversationId}/${task.messageId}`,
      contextId: this.conversationId,
      messageId: task.messageId,
    };
    if (finished) {
      const runEvents = this.events.all().filter((event) => event.run === finished.run);
      return { key: 'end', status: finalStatusOf(ref, finished, runEvents), final: true };
    }
    if (this.conversationOver) {
      const parts = [{ text: 'the conversation ended before the task finished', mediaType: 'text/plain' }];
      const status = statusOf(ref, 'TASK_STATE_FAILED', workflowTime(), { key: 'ended', parts });
      return { key: 'ended', status, final: true };
    }
    if (task.run === undefined) return undefined;
    const at = workflowTime();
    const waiting = this.pending().filter((approval) => approval.run === task.run);
    if (waiting.length === 0)
      return { key: 'working', status: statusOf(ref, 'TASK_STATE_WORKING', at), final: false };
    const key = `wait-${waiting.map((approval) => approval.toolCallId).join(',')}`;
    const status = statusOf(ref, 'TASK_STATE_INPUT_REQUIRED', at, { key, parts: approvalParts(waiting) });
    return { key, status, final: false };
  }

  /** Sends `state` to each of `configs` not yet told it, under an id made from the event that caused it. */
  private send(task: PushTask, state: PushState, seq: number, configs: readonly KeptConfig[]): void {
    for (const kept of configs) {
      if (kept.sent === state.key || kept.sent === 'end' || kept.sent === 'ended') continue;
      kept.sent = state.key;
      const notificationId = `${this.idPrefix}/${seq}/${kept.serial}`;
      const { url, token, authentication } = kept.config;
      this.deliveries.start(() =>
        a2aPushActivities.deliverA2APush.executeWithOptions(
          { summary: `A2A push ${kept.config.id}: ${state.status.state}` },
          [
            {
              notificationId,
              url,
              ...(token !== undefined ? { token } : {}),
              ...(authentication ? { authentication } : {}),
              body: {
                statusUpdate: {
                  taskId: `${this.conversationId}/${task.messageId}`,
                  contextId: this.conversationId,
                  status: state.status,
                  metadata: { [A2A_NOTIFICATION_ID_KEY]: notificationId },
                },
              },
            },
          ],
        ),
      );
    }
  }
}

/** Every configuration of the task has been sent its end: nothing more will be sent. */
function isOver(task: PushTask): boolean {
  return task.configs.every((kept) => kept.sent === 'end' || kept.sent === 'ended');
}

/** What `event` tells of the run that took the task's message (or that the message steered). */
function learnRun(task: PushTask, event: AgentEvent): void {
  if (task.run !== undefined) return;
  if (event.type === 'run_started' && event.messageIds.includes(task.messageId)) task.run = event.run;
  if (event.type === 'steered' && event.messageId === task.messageId) task.run = event.run;
}
