import type { Payload, PayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { LOCAL_ACTIVITY_MARKER } from '../shared/local-activity-marker';
import { isBudgetPauseId } from '../shared/budget';
import { isDailyBudgetSpent } from '../shared/daily-budget';
import { int64, timestampMs } from './history-numbers';
import { RunNumbering } from './run-numbering';
import {
  type ActivityItem,
  type ActivityOutcome,
  type ExecutionStatus,
  type ModelCallItem,
  TIMELINE_TEXT_CHARS,
  type Timeline,
  type TimelineExecution,
  type TimelineItem,
  type ToolCallItem,
} from './timeline';
import {
  type ToolOutcomeValue,
  cut,
  readAbortInput,
  readApprovalDecision,
  readAssistantReply,
  readModelInputMessages,
  readStartInput,
  readToolOutcome,
  readToolRunInput,
  readUserMessageInput,
  receiptField,
  stringOf,
} from './timeline-values';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
type Failure = temporal.api.failure.v1.IFailure;

/** One Temporal execution's history; a conversation has one more per continue-as-new. */
export interface ExecutionHistory {
  /** The execution's Temporal run id. */
  runId: string;
  /** Its history, as Temporal returns it. */
  history: temporal.api.history.v1.IHistory;
}

/**
 * The timeline of a conversation from the histories of its executions (oldest first), their
 * payloads already through the payload codecs (see `decodeHistoryPayloads`); `converter` turns each
 * payload into its value. Pure: the same histories always give the same timeline.
 */
export function buildTimeline(
  conversationId: string,
  executions: ExecutionHistory[],
  converter: PayloadConverter,
): Timeline {
  const builder = new TimelineBuilder(converter);
  for (const execution of executions) builder.readExecution(execution);
  return { conversationId, executions: builder.executions, items: builder.sortedItems() };
}

/** Shown for a callback tool's call that was interrupted, until a later model call shows what the model read. */
const INTERRUPTED_BEFORE_ANSWER =
  'interrupted before the tool answered; its later answer was not given to the model';

/** Where an item begins. */
interface Base {
  at: string;
  offsetMs: number;
  execution: number;
  eventId: number;
}

type ActivityItemOf = ModelCallItem | ToolCallItem | ActivityItem;

interface ActivityTrack {
  scheduledAtMs: number;
  item: ActivityItemOf;
  /** The workflow asked to cancel it (steer, abort). */
  cancelRequested?: boolean;
}

/** What one execution's events refer back to. */
interface ExecutionState {
  execution: TimelineExecution;
  /** By the id of their ActivityTaskScheduled event. */
  activities: Map<number, ActivityTrack>;
  /** By the id of their WorkflowExecutionUpdateAccepted event. */
  updates: Map<number, TimelineItem>;
}

type ClosedStatus = Exclude<ExecutionStatus, 'running' | 'continued_as_new'>;

class TimelineBuilder {
  readonly executions: TimelineExecution[] = [];
  private readonly items: TimelineItem[] = [];
  private originMs: number | undefined;
  private readonly runs = new RunNumbering();
  /** Tool calls by id, across executions: a call's result may only show in a later model call's input. */
  private readonly toolCalls = new Map<string, ToolCallItem>();
  private readonly answeredByCallback = new Set<string>();

  constructor(private readonly converter: PayloadConverter) {}

  sortedItems(): TimelineItem[] {
    return this.items
      .map((item, index) => ({ item, index }))
      .sort(
        (a, b) =>
          a.item.execution - b.item.execution ||
          a.item.offsetMs - b.item.offsetMs ||
          a.item.eventId - b.item.eventId ||
          a.index - b.index,
      )
      .map(({ item }) => item);
  }

  readExecution({ runId, history }: ExecutionHistory): void {
    const execution: TimelineExecution = { runId, startedAt: '', status: 'running' };
    this.executions.push(execution);
    const state: ExecutionState = { execution, activities: new Map(), updates: new Map() };
    for (const event of history.events ?? []) this.readEvent(event, state);
  }

  private readEvent(event: HistoryEvent, state: ExecutionState): void {
    const timeMs = timestampMs(event.eventTime) ?? this.originMs ?? 0;
    this.originMs ??= timeMs;
    const base: Base = {
      at: new Date(timeMs).toISOString(),
      offsetMs: timeMs - this.originMs,
      execution: this.executions.indexOf(state.execution) + 1,
      eventId: int64(event.eventId),
    };
    const activity = (scheduledEventId: Parameters<typeof int64>[0]) =>
      state.activities.get(int64(scheduledEventId));

    if (event.workflowExecutionStartedEventAttributes) {
      this.started(base, state.execution, event.workflowExecutionStartedEventAttributes);
    } else if (event.workflowExecutionSignaledEventAttributes) {
      const { signalName, input } = event.workflowExecutionSignaledEventAttributes;
      this.message(base, 'signal', signalName ?? '', this.all(input?.payloads));
    } else if (event.workflowExecutionUpdateAcceptedEventAttributes) {
      const input = event.workflowExecutionUpdateAcceptedEventAttributes.acceptedRequest?.input;
      state.updates.set(
        base.eventId,
        this.message(base, 'update', input?.name ?? '', this.all(input?.args?.payloads)),
      );
    } else if (event.workflowExecutionUpdateCompletedEventAttributes) {
      const { acceptedEventId, outcome } = event.workflowExecutionUpdateCompletedEventAttributes;
      const item = state.updates.get(int64(acceptedEventId));
      if (item) this.updateCompleted(item, outcome);
    } else if (event.activityTaskScheduledEventAttributes) {
      const { activityType, input } = event.activityTaskScheduledEventAttributes;
      const item = this.activityScheduled(base, activityType?.name ?? '', this.first(input?.payloads));
      state.activities.set(base.eventId, { scheduledAtMs: timeMs, item });
    } else if (event.activityTaskStartedEventAttributes) {
      const { scheduledEventId, attempt } = event.activityTaskStartedEventAttributes;
      const track = activity(scheduledEventId);
      if (track) track.item.attempts = attempt ?? 1;
    } else if (event.activityTaskCompletedEventAttributes) {
      const { scheduledEventId, result } = event.activityTaskCompletedEventAttributes;
      const track = activity(scheduledEventId);
      if (track) this.activityClosed(track, base, timeMs, 'completed', this.first(result?.payloads));
    } else if (event.activityTaskFailedEventAttributes) {
      const { scheduledEventId, failure } = event.activityTaskFailedEventAttributes;
      const track = activity(scheduledEventId);
      if (track) this.activityClosed(track, base, timeMs, 'failed', undefined, failureText(failure));
    } else if (event.activityTaskTimedOutEventAttributes) {
      const { scheduledEventId, failure } = event.activityTaskTimedOutEventAttributes;
      const track = activity(scheduledEventId);
      if (track) this.activityClosed(track, base, timeMs, 'timed_out', undefined, failureText(failure));
    } else if (event.activityTaskCancelRequestedEventAttributes) {
      const track = activity(event.activityTaskCancelRequestedEventAttributes.scheduledEventId);
      if (track) track.cancelRequested = true;
    } else if (event.activityTaskCanceledEventAttributes) {
      const track = activity(event.activityTaskCanceledEventAttributes.scheduledEventId);
      if (track) this.activityClosed(track, base, timeMs, 'cancelled', undefined, 'cancelled');
    } else if (event.markerRecordedEventAttributes?.markerName === LOCAL_ACTIVITY_MARKER) {
      const { details } = event.markerRecordedEventAttributes;
      this.localActivityRecorded(this.first(details?.data?.payloads), this.first(details?.result?.payloads));
    } else if (event.workflowExecutionContinuedAsNewEventAttributes) {
      const newRunId = event.workflowExecutionContinuedAsNewEventAttributes.newExecutionRunId ?? '';
      this.close(state.execution, base.at, 'continued_as_new');
      this.items.push({ ...base, kind: 'continued_as_new', newRunId });
    } else if (event.workflowExecutionCompletedEventAttributes) {
      const result = this.first(event.workflowExecutionCompletedEventAttributes.result?.payloads);
      this.closed(state.execution, base, 'completed', result);
    } else if (event.workflowExecutionFailedEventAttributes) {
      const failure = event.workflowExecutionFailedEventAttributes.failure;
      this.closed(state.execution, base, 'failed', failureText(failure));
    } else if (event.workflowExecutionTimedOutEventAttributes) {
      this.closed(state.execution, base, 'timed_out');
    } else if (event.workflowExecutionTerminatedEventAttributes) {
      const reason = event.workflowExecutionTerminatedEventAttributes.reason || undefined;
      this.closed(state.execution, base, 'terminated', reason);
    } else if (event.workflowExecutionCanceledEventAttributes) {
      this.closed(state.execution, base, 'canceled');
    }
  }

  private started(
    base: Base,
    execution: TimelineExecution,
    attributes: temporal.api.history.v1.IWorkflowExecutionStartedEventAttributes,
  ): void {
    execution.startedAt = base.at;
    const input = readStartInput(this.first(attributes.input?.payloads));
    this.runs.executionStarted({
      ...(input.carried ? { runCount: input.carried.runCount } : {}),
      ...(input.maxToolIterations !== undefined ? { maxToolIterations: input.maxToolIterations } : {}),
      queuedMessageIds: input.queuedMessageIds,
      ...(input.pausedRun ? { pausedRun: input.pausedRun } : {}),
    });
    this.items.push({
      ...base,
      kind: 'execution_started',
      runId: execution.runId,
      ...(attributes.continuedExecutionRunId ? { continuedFrom: attributes.continuedExecutionRunId } : {}),
      taskQueue: attributes.taskQueue?.name ?? '',
      ...(input.options !== undefined ? { options: input.options } : {}),
      ...(input.carried ? { carried: input.carried } : {}),
    });
    if (input.initialMessage) {
      this.runs.messageReceived(input.initialMessage.messageId);
      this.items.push({ ...base, kind: 'user_message', ...cutText(input.initialMessage), via: 'start' });
    }
  }

  /** A signal or an accepted update, by name; returns the item it became. */
  private message(base: Base, via: 'signal' | 'update', name: string, args: unknown[]): TimelineItem {
    const [arg] = args;
    const inRun = this.runs.current !== undefined ? { run: this.runs.current } : {};
    let item: TimelineItem | undefined;
    if (name === 'userMessage' && via === 'signal') {
      const message = readUserMessageInput(arg);
      if (message) {
        this.runs.messageReceived(message.messageId);
        item = { ...base, kind: 'user_message', ...cutText(message), via };
      }
    } else if (name === 'steer') {
      const message = readUserMessageInput(arg);
      if (message) {
        this.runs.steeringReceived(message.messageId);
        const text = cut(message.text, TIMELINE_TEXT_CHARS);
        item = { ...base, ...inRun, kind: 'steer', messageId: message.messageId, text, via };
      }
    } else if (name === 'abort') {
      item = { ...base, ...inRun, kind: 'abort', ...readAbortInput(arg), via };
      // A signal is taken at once; an update once it succeeds (see updateCompleted).
      if (via === 'signal') this.runs.aborted();
    } else if (name === 'approve') {
      const decision = readApprovalDecision(arg);
      const budgetPause = decision !== undefined && isBudgetPauseId(decision.toolCallId);
      const run = budgetPause ? { run: this.runs.runOfBudgetPause } : inRun;
      if (decision) item = { ...base, ...run, kind: 'approval', ...decision, via };
      if (budgetPause && decision.decision.startsWith('reject')) this.runs.budgetStopped();
    } else if (name === 'end' && via === 'signal') {
      const reason = stringOf((arg as { reason?: unknown } | undefined)?.reason);
      item = { ...base, kind: 'end_requested', ...(reason !== undefined ? { reason } : {}) };
    }
    item ??= { ...base, ...inRun, kind: via, name, args };
    this.items.push(item);
    return item;
  }

  private updateCompleted(
    item: TimelineItem,
    outcome: temporal.api.update.v1.IOutcome | null | undefined,
  ): void {
    if (outcome?.failure) {
      if (
        item.kind === 'approval' ||
        item.kind === 'steer' ||
        item.kind === 'abort' ||
        item.kind === 'update'
      ) {
        item.refused = failureText(outcome.failure);
      }
      return;
    }
    const receipt = this.first(outcome?.success?.payloads);
    if (item.kind === 'steer') {
      const interrupting = receiptField(receipt, 'interrupting');
      if (typeof interrupting === 'boolean') item.interrupting = interrupting;
    } else if (item.kind === 'abort') {
      const run = receiptField(receipt, 'run');
      if (typeof run === 'number') item.abortedRun = run;
      this.runs.aborted();
    } else if (item.kind === 'update' && receipt !== undefined) {
      item.result = receipt;
    }
  }

  private activityScheduled(base: Base, type: string, input: unknown): ActivityItemOf {
    const call = type === 'runTool' ? readToolRunInput(input) : undefined;
    let item: ActivityItemOf;
    if (type === 'callModel') {
      item = this.modelCallScheduled(base, input);
    } else if (call) {
      // The model asked for it earlier (see modelCallAnswered): it runs after all.
      const asked = this.toolCalls.get(call.toolCallId);
      if (asked) this.items.splice(this.items.indexOf(asked), 1);
      const run = asked?.run ?? this.runs.current;
      item = {
        ...base,
        ...(run !== undefined ? { run } : {}),
        kind: 'tool_call',
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        arguments: call.arguments,
        ran: true,
        outcome: 'running',
        attempts: 1,
      };
      this.toolCalls.set(call.toolCallId, item);
    } else {
      item = { ...base, kind: 'activity', activityType: type, outcome: 'running', attempts: 1 };
    }
    this.items.push(item);
    return item;
  }

  private modelCallScheduled(base: Base, input: unknown): ModelCallItem {
    const messages = readModelInputMessages(input);
    const userMessageIds = messages.flatMap((message) =>
      message.role === 'user' && typeof message.messageId === 'string' ? [message.messageId] : [],
    );
    const { run, iteration, took } = this.runs.modelCallScheduled(userMessageIds);
    if (took) this.items.push({ ...base, kind: 'run_started', run, messageIds: took });
    // Results the workflow made itself (refused, unknown, interrupted calls) reach history only here.
    for (const message of messages) {
      const call =
        typeof message.toolCallId === 'string' ? this.toolCalls.get(message.toolCallId) : undefined;
      if (message.role === 'toolResult' && call && !call.ran && call.result === undefined) {
        this.unrunCallAnswered(call, message);
      } else if (message.role === 'toolResult' && call?.ran && message.aborted === true) {
        // What the model read of an interrupted call, word for word.
        const seen = readToolOutcome(message);
        if (seen) setToolOutcome(call, seen);
      }
    }
    return { ...base, run, kind: 'model_call', iteration, outcome: 'running', attempts: 1, toolCalls: [] };
  }

  /**
   * A call the workflow answered without running it, moved to when it was answered (after the
   * decision that refused it); one blocked by an approval's timeout shows that as a decision by
   * `timeout` (known only from outcomes recorded with their fields).
   */
  private unrunCallAnswered(call: ToolCallItem, message: Record<string, unknown>): void {
    const outcome = readToolOutcome(message);
    if (!outcome) return;
    setToolOutcome(call, outcome);
    if (typeof message.timestamp === 'number' && this.originMs !== undefined) {
      call.at = new Date(message.timestamp).toISOString();
      call.offsetMs = message.timestamp - this.originMs;
    }
    this.items.splice(this.items.indexOf(call), 1);
    if (outcome.blockedBy === 'approval_timeout') {
      const { at, offsetMs, execution, eventId, run } = call;
      this.items.push({
        at,
        offsetMs,
        execution,
        eventId,
        ...(run !== undefined ? { run } : {}),
        kind: 'approval',
        toolCallId: call.toolCallId,
        decision: 'reject_once',
        by: 'timeout',
        ...(outcome.reason !== undefined ? { reason: outcome.reason } : {}),
        via: 'timeout',
      });
    }
    this.items.push(call);
  }

  private activityClosed(
    { item, scheduledAtMs, cancelRequested }: ActivityTrack,
    base: Base,
    closedAtMs: number,
    outcome: ActivityOutcome,
    result?: unknown,
    error?: string,
  ): void {
    item.outcome = outcome;
    if (error !== undefined) item.error = error;
    if (item.kind === 'model_call') {
      item.latencyMs = closedAtMs - scheduledAtMs;
      if (outcome === 'completed') this.modelCallAnswered(item, base, result);
      else this.runs.modelCallFailed();
      return;
    }
    item.durationMs = closedAtMs - scheduledAtMs;
    if (item.kind === 'activity' && item.activityType === 'listTools' && outcome === 'completed') {
      this.learnCallbackTools(result);
      return;
    }
    const value = item.kind === 'tool_call' && outcome === 'completed' ? readToolOutcome(result) : undefined;
    if (item.kind === 'tool_call' && cancelRequested && this.answeredByCallback.has(item.toolName)) {
      // The workflow stopped waiting for it when it asked to cancel: the model read an interrupted
      // result, and whatever the tool's server sent later went nowhere.
      if (!item.aborted)
        setToolOutcome(item, {
          text: INTERRUPTED_BEFORE_ANSWER,
          isError: true,
          aborted: true,
          status: 'aborted',
        });
      if (value) item.lateResult = cut(value.text, TIMELINE_TEXT_CHARS);
      return;
    }
    if (item.kind === 'tool_call' && value) setToolOutcome(item, value);
  }

  /**
   * A tool run as a local activity: its marker holds when it ran and its result, which names the
   * call (the marker has no input). One that failed for good names nothing, and shows as the model
   * read it.
   */
  private localActivityRecorded(data: unknown, result: unknown): void {
    const marker = data as LocalActivityMarkerData | undefined;
    if (marker?.activity_type !== 'runLocalTool') return;
    const toolCallId = (result as { toolCallId?: unknown } | undefined)?.toolCallId;
    const call = typeof toolCallId === 'string' ? this.toolCalls.get(toolCallId) : undefined;
    if (!call) return;
    call.ran = true;
    call.outcome = 'completed';
    call.attempts = marker.attempt ?? 1;
    const scheduledMs = markerTimeMs(marker.original_schedule_time);
    const completedMs = markerTimeMs(marker.complete_time);
    // The marker's two times are not taken from one clock (a short call can come out below zero):
    // a difference below zero says nothing of how long the call took, so none is shown.
    if (scheduledMs !== undefined && completedMs !== undefined && completedMs >= scheduledMs)
      call.durationMs = completedMs - scheduledMs;
    const value = readToolOutcome(result);
    if (value) setToolOutcome(call, value);
  }

  /** Tools that answer by callback, from the worker's tool listing: a cancel does not wait for them. */
  private learnCallbackTools(listing: unknown): void {
    const tools = (listing as { tools?: unknown } | undefined)?.tools;
    if (!Array.isArray(tools)) return;
    for (const tool of tools as Array<{ name?: unknown; asyncCompletion?: unknown }>) {
      if (typeof tool.name === 'string' && tool.asyncCompletion === true)
        this.answeredByCallback.add(tool.name);
    }
  }

  /** The reply's text, usage and tool calls; each tool call is "not run" until a runTool activity says otherwise. */
  private modelCallAnswered(item: ModelCallItem, base: Base, result: unknown): void {
    if (isDailyBudgetSpent(result)) {
      // Not made: the run waited for its agent's next day, then asked again (the same iteration).
      item.text = `(not made: agent ${result.dailyBudgetSpent.agentId}'s daily token budget was spent)`;
      item.toolCalls = [];
      this.runs.modelCallHeldBack();
      return;
    }
    const reply = readAssistantReply(result);
    if (!reply) return;
    item.text = cut(reply.text, TIMELINE_TEXT_CHARS);
    item.toolCalls = reply.toolCalls.map(({ id, name }) => ({ id, name }));
    if (reply.model !== undefined) item.model = reply.model;
    if (reply.usage) item.usage = reply.usage;
    for (const call of reply.toolCalls) {
      const asked: ToolCallItem = {
        ...base,
        ...(item.run !== undefined ? { run: item.run } : {}),
        kind: 'tool_call',
        toolCallId: call.id,
        toolName: call.name,
        arguments: call.arguments,
        ran: false,
        outcome: 'not_run',
      };
      this.toolCalls.set(call.id, asked);
      this.items.push(asked);
    }
    this.runs.modelCallAnswered(reply.toolCalls.length);
  }

  private closed(execution: TimelineExecution, base: Base, status: ClosedStatus, detail?: unknown): void {
    this.close(execution, base.at, status);
    this.runs.executionClosed();
    this.items.push({
      ...base,
      kind: 'execution_closed',
      status,
      ...(detail !== undefined ? { detail } : {}),
    });
  }

  private close(execution: TimelineExecution, at: string, status: ExecutionStatus): void {
    execution.status = status;
    execution.closedAt = at;
  }

  private first(payloads: Payload[] | null | undefined): unknown {
    return this.all(payloads)[0];
  }

  /** Each payload's value; one that cannot be read (an unknown encoding, a blob not found) says so. */
  private all(payloads: Payload[] | null | undefined): unknown[] {
    return (payloads ?? []).map((payload) => {
      try {
        return this.converter.fromPayload(payload);
      } catch (error) {
        return `<unreadable payload: ${(error as Error).message}>`;
      }
    });
  }
}

interface LocalActivityMarkerData {
  activity_type?: string;
  attempt?: number;
  original_schedule_time?: MarkerTime;
  complete_time?: MarkerTime;
}

interface MarkerTime {
  seconds?: number;
  nanos?: number;
}

function markerTimeMs(time: MarkerTime | undefined): number | undefined {
  if (typeof time?.seconds !== 'number') return undefined;
  return time.seconds * 1_000 + Math.round((time.nanos ?? 0) / 1e6);
}

function cutText<T extends { text: string }>(message: T): T {
  return { ...message, text: cut(message.text, TIMELINE_TEXT_CHARS) };
}

function setToolOutcome(call: ToolCallItem, outcome: ToolOutcomeValue): void {
  call.result = cut(outcome.text, TIMELINE_TEXT_CHARS);
  if (outcome.isError !== undefined) call.isError = outcome.isError;
  if (outcome.aborted) call.aborted = true;
  if (outcome.status !== undefined) call.status = outcome.status;
  if (outcome.errorKind !== undefined) call.errorKind = outcome.errorKind;
  if (outcome.blockedBy !== undefined) call.blockedBy = outcome.blockedBy;
}

/** A failure in one line: its message, the timeout kind, and the message of its cause. */
function failureText(failure: Failure | null | undefined): string {
  if (!failure) return 'failed';
  const timeout = failure.timeoutFailureInfo?.timeoutType;
  const parts = [failure.message || undefined];
  if (timeout) {
    const kind = temporal.api.enums.v1.TimeoutType[timeout]?.replace('TIMEOUT_TYPE_', '').toLowerCase();
    parts.push(`${kind ?? 'unknown'} timeout`);
  }
  if (failure.cause?.message) parts.push(failure.cause.message);
  return parts.filter(Boolean).join(': ') || 'failed';
}
