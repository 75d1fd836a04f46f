import { conversationFairnessKey } from '../shared/fairness-key';
import {
  type DailySpent,
  agentDailyBudgetStatusQuery,
  agentDailyBudgetWorkflowId,
  utcDayOf,
} from '../shared/daily-budget';
import { conversationSummary } from '../shared/activity-summary';
import type { CompactionReceipt } from '../shared/compaction';
import type { ImageContent } from '../shared/content';
import { randomUUID } from 'node:crypto';
import {
  type Client,
  type QueryDefinition,
  WorkflowExecutionAlreadyStartedError,
  type WorkflowExecutionStatusName,
  type WorkflowHandle,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import { type ApprovalDecision, ApprovalDecisionSchema, type PendingApproval } from '../shared/approvals';
import { CONVERSATION_WORKFLOW_TYPE, DEFAULT_TASK_QUEUE } from '../shared/constants';
import { WORKFLOW_TASK_TIMEOUT_MS } from '../shared/workflow-task-bounds';
import {
  type AbortInput,
  AbortInputSchema,
  type AbortReceipt,
  type ApprovalReceipt,
  type ConversationState,
  type ConversationStatusSummary,
  type SteerReceipt,
  UserMessageInputSchema,
  abortUpdate,
  approveUpdate,
  compactUpdate,
  endSignal,
  eventsQuery,
  pendingApprovalsQuery,
  stateQuery,
  statusQuery,
  steerSignal,
  steerUpdate,
  type TranscriptPage,
  transcriptPageQuery,
  type UserMessageInput,
  userMessageSignal,
  answerUserChoiceUpdate,
  rapViewsQuery,
  type ApprovalModeInput,
  ApprovalModeInputSchema,
  setApprovalModeUpdate,
} from '../shared/conversation-api';
import {
  type ConversationOptions,
  type ConversationOptionsInput,
  ConversationOptionsSchema,
} from '../shared/conversation-options';
import type { AgentEvent } from '../shared/events';
import type { Message } from '../shared/messages';
import { type UserChoiceAnswer, UserChoiceAnswerSchema } from '../shared/rap';
import { assertConversationId } from '../shared/ids';
import { LOCAL_ACTIVITY_MARKER } from '../shared/local-activity-marker';
import {
  ConversationEndedError,
  ConversationExistsError,
  ConversationNotFoundError,
  InvalidInputError,
  UpdateRefusedError,
  invalidInput,
} from '../shared/conversation-errors';
import { DEFAULT_POLL_MS, pollConversation } from './conversation-poller';
import {
  EndedUnansweredError,
  READ_QUERY_RETRY_MS,
  WATCH_QUERY_RETRY_MS,
  queryRetried,
  queryWhileRunning,
} from './query-retry';
import { type ModelTextSource, listenEarly, processLiveModelText } from './live-model-text';
import {
  EndedConversationSchema,
  type RunEnd,
  type RunSought,
  endsRun,
  learnRun,
  runEndFromResult,
} from './run-end';

export interface SendOptions {
  /**
   * True (the default): a conversation that does not exist is started by this message. False: only
   * a conversation that exists takes it; otherwise ConversationNotFoundError and nothing is started
   * (what a caller allowed to send but not to start needs).
   */
  start?: boolean;
  /** Used only when this message starts the conversation. */
  options?: ConversationOptionsInput;
  messageId?: string;
  /** Who sends it, as this caller vouches: decides whether `ownerOnly` tools may run (the conversation's `owners`). */
  sender?: string;
  /** Images the model sees with the text (at most MAX_MESSAGE_IMAGES). */
  images?: ImageContent[];
}

export interface Sent {
  conversationId: string;
  messageId: string;
  /** Events up to here came before this message. */
  afterSeq: number;
  /** Runs numbered up to here did not take this message (they began before it was sent). */
  afterRun: number;
  /** True when this message started the conversation. */
  started: boolean;
}

export interface SteerOptions {
  messageId?: string;
  /** As for `send`: a steering message joins the run, and a non-owner's makes it a non-owner's run. */
  sender?: string;
  /**
   * True (the default): the `steer` update, which waits for a worker to take the message and
   * returns whether a run was interrupted. False: the `steer` signal, which is stored even while no
   * worker is running and returns no receipt.
   */
  wait?: boolean;
}

export interface Steered extends Sent {
  /** From the update's receipt: a run was in progress and is being steered. Absent with `wait: false`. */
  interrupting?: boolean;
}

export interface WatchOptions {
  /** Only events with a higher sequence number; the conversation's newest event when absent (only what comes next). */
  afterSeq?: number;
  /** Stops after yielding the first event for which this is true. */
  until?: (event: AgentEvent) => boolean;
  /** Between two polls, in ms (default 200). */
  pollMs?: number;
  /** Ends watching at once (a call to Temporal in flight is cancelled too). */
  signal?: AbortSignal;
}

/**
 * The run `followRun` follows to its end (see RunSought), and from where: what `send` and `steer`
 * return will do.
 */
export interface RunToFollow extends RunSought {
  conversationId: string;
  /** Events after this one are yielded. */
  afterSeq: number;
}

export interface FollowRunOptions {
  /** Between two polls, in ms (default 200). */
  pollMs?: number;
  /** Ends following at once (it then returns `{ how: 'stopped' }`). */
  signal?: AbortSignal;
}

/**
 * Once the conversation has ended, how long a follower goes on asking for its events before it reads
 * the workflow's result instead: at once, since the result says how the last run ended.
 */
const FOLLOW_AFTER_END_MS = 0;

/** How a watch ended: `until` matched, the conversation closed (every event seen), or closed with events unread. */
type WatchEnd = 'until' | 'closed' | 'unanswered';

/** What Temporal knows of a conversation's workflow, without asking the workflow. */
export interface ConversationExecution {
  conversationId: string;
  /** RUNNING while the conversation lasts; COMPLETED, FAILED, TERMINATED, … once it has ended. */
  executionStatus: WorkflowExecutionStatusName;
  startTime: Date;
  closeTime?: Date;
  taskQueue: string;
  /** `conversation` for conversations; anything else is some other workflow that happens to have this id. */
  workflowType: string;
}

export interface ConversationListing {
  conversationId: string;
  startTime: Date;
  taskQueue: string;
}

/** The typed way for a service to talk to conversations; everything goes through Temporal. */
export class AgentClient {
  /**
   * `liveText`: where model activities of this process hand over their text as it arrives, so
   * watchers see it at once; text of workers elsewhere comes with their heartbeats.
   */
  constructor(
    private readonly client: Client,
    readonly taskQueue: string = DEFAULT_TASK_QUEUE,
    private readonly liveText: ModelTextSource = processLiveModelText,
  ) {}

  /**
   * Starts a conversation that waits for its first message; returns its id. Refuses an id already
   * used (ConversationExistsError) and options or an id a client may not give (InvalidInputError).
   */
  async start(
    conversationId: string = `conv-${randomUUID()}`,
    options: ConversationOptionsInput = {},
  ): Promise<string> {
    assertConversationId(conversationId);
    assertClientStart(conversationId, options);
    const parsed = ConversationOptionsSchema.safeParse(options);
    if (!parsed.success) throw invalidInput('conversation options', parsed.error);
    await this.startWorkflow(conversationId, { options: parsed.data });
    return conversationId;
  }

  /**
   * Starts a conversation that goes on from state it is handed (`carried`, as continue-as-new hands
   * it on; `fork` builds it from another conversation's history), waiting for its next message.
   * Refuses like `start`. Workers accept carried state from a client only as far as their
   * AGENT_ACCEPT_CARRIED says, or, for a fork, once they have checked it against the original's history.
   */
  async startCarried(
    conversationId: string,
    options: ConversationOptionsInput,
    carried: Record<string, unknown>,
  ): Promise<string> {
    assertConversationId(conversationId);
    assertClientStart(conversationId, options);
    const parsed = ConversationOptionsSchema.safeParse(options);
    if (!parsed.success) throw invalidInput('conversation options', parsed.error);
    await this.startWorkflow(conversationId, { options: parsed.data, carried });
    return conversationId;
  }

  private async startWorkflow(
    conversationId: string,
    input: { options: ConversationOptions; carried?: Record<string, unknown> },
  ): Promise<void> {
    try {
      await this.client.workflow.start(CONVERSATION_WORKFLOW_TYPE, {
        workflowId: conversationId,
        taskQueue: this.taskQueue,
        args: [input],
        // A conversation id names one conversation forever, so events and transcripts never mix.
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT_MS,
        priority: {
          fairnessKey: conversationFairnessKey(conversationId, input.options.agentId),
        },
      });
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError)
        throw new ConversationExistsError(conversationId);
      throw error;
    }
  }

  /**
   * Sends a user message, starting the conversation if it does not exist (unless `start: false`).
   * Refuses an ended conversation (ConversationEndedError). `followRun(sent)` follows the run that
   * takes it.
   */
  async send(conversationId: string, text: string, sendOptions: SendOptions = {}): Promise<Sent> {
    assertConversationId(conversationId);
    const message = UserMessageInputSchema.safeParse({
      text,
      messageId: sendOptions.messageId ?? randomUUID(),
      ...(sendOptions.sender !== undefined ? { sender: sendOptions.sender } : {}),
      ...(sendOptions.images?.length ? { images: sendOptions.images } : {}),
    });
    if (!message.success) throw invalidInput('message', message.error);
    const options = ConversationOptionsSchema.safeParse(sendOptions.options ?? {});
    if (!options.success) throw invalidInput('conversation options', options.error);
    let afterSeq = 0;
    let afterRun = 0;
    let started = true;
    try {
      await this.assertRunning(conversationId);
      ({ lastSeq: afterSeq, runCount: afterRun } = await this.read(conversationId, statusQuery));
      started = false;
    } catch (error) {
      if (!(error instanceof ConversationNotFoundError) || sendOptions.start === false) throw error;
    }
    if (started && sendOptions.start !== false) assertClientStart(conversationId, sendOptions.options ?? {});
    if (sendOptions.start === false) {
      // A plain signal: it can never start a workflow, even if this one closed since we looked.
      const handle = this.handle(conversationId);
      await this.explainErrors(conversationId, () => handle.signal(userMessageSignal, message.data));
      return { conversationId, messageId: message.data.messageId, afterSeq, afterRun, started: false };
    }
    await this.client.workflow.signalWithStart(CONVERSATION_WORKFLOW_TYPE, {
      workflowId: conversationId,
      taskQueue: this.taskQueue,
      args: [{ options: options.data }],
      signal: userMessageSignal,
      signalArgs: [message.data],
      workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT_MS,
      priority: { fairnessKey: conversationFairnessKey(conversationId, options.data.agentId) },
      // Shown by the Web UI for the conversation; only used when this call starts it.
      staticSummary: conversationSummary(text),
    });
    return { conversationId, messageId: message.data.messageId, afterSeq, afterRun, started };
  }

  /**
   * Steers the run in progress: its running tools are cancelled (keeping what they return), then the
   * message joins the transcript and the run goes on. With no run in progress it starts one. Never
   * starts a conversation: one that does not exist is ConversationNotFoundError.
   */
  async steer(conversationId: string, text: string, steerOptions: SteerOptions = {}): Promise<Steered> {
    const message = UserMessageInputSchema.safeParse({
      text,
      messageId: steerOptions.messageId ?? randomUUID(),
      ...(steerOptions.sender !== undefined ? { sender: steerOptions.sender } : {}),
    });
    if (!message.success) throw invalidInput('steering message', message.error);
    await this.assertRunning(conversationId);
    const { lastSeq, runCount } = await this.status(conversationId);
    const handle = this.handle(conversationId);
    // The run in progress may be the one it joins.
    const afterRun = Math.max(0, runCount - 1);
    const sent = {
      conversationId,
      messageId: message.data.messageId,
      afterSeq: lastSeq,
      afterRun,
      started: false,
    };
    if (steerOptions.wait === false) {
      await this.explainErrors(conversationId, () => handle.signal(steerSignal, message.data));
      return sent;
    }
    const receipt: SteerReceipt = await this.update(conversationId, 'steer', () =>
      handle.executeUpdate(steerUpdate, { args: [message.data] }),
    );
    return { ...sent, interrupting: receipt.interrupting };
  }

  /** Summarises the older turns now (at the next turn boundary of a run in progress); returns once done. */
  async compact(conversationId: string): Promise<CompactionReceipt> {
    const handle = this.handle(conversationId);
    return this.update(conversationId, 'compact', () => handle.executeUpdate(compactUpdate));
  }

  /** Aborts the run in progress; the conversation then waits for the next message. Refused when no run is in progress. */
  async abort(conversationId: string, input: AbortInput = {}): Promise<AbortReceipt> {
    const parsed = AbortInputSchema.safeParse(input);
    if (!parsed.success) throw invalidInput('abort', parsed.error);
    const handle = this.handle(conversationId);
    return this.update(conversationId, 'abort', () =>
      handle.executeUpdate(abortUpdate, { args: [parsed.data] }),
    );
  }

  /**
   * Decides a pending approval. Refused (UpdateRefusedError, saying why) for an unknown or already
   * decided `toolCallId` and for an approver the conversation does not list.
   */
  async approve(conversationId: string, decision: ApprovalDecision): Promise<ApprovalReceipt> {
    const parsed = ApprovalDecisionSchema.safeParse(decision);
    if (!parsed.success) throw invalidInput('approval decision', parsed.error);
    const handle = this.handle(conversationId);
    return this.update(conversationId, 'approve', () =>
      handle.executeUpdate(approveUpdate, { args: [parsed.data] }),
    );
  }

  /**
   * Answers a RAP tool's `user_choice` (the `user_choice_requested` event): the index chosen, or the
   * tool's default when `selected` is absent. Refused for a call with no pending choice or an index out of range.
   */
  async answerUserChoice(conversationId: string, answer: UserChoiceAnswer): Promise<{ selected: number }> {
    const parsed = UserChoiceAnswerSchema.safeParse(answer);
    if (!parsed.success) throw invalidInput('user choice', parsed.error);
    const handle = this.handle(conversationId);
    return this.update(conversationId, 'answerUserChoice', () =>
      handle.executeUpdate(answerUserChoiceUpdate, { args: [parsed.data] }),
    );
  }

  /** The latest content of each view RAP tools pushed to the conversation, by view type. */
  views(conversationId: string): Promise<Record<string, Record<string, unknown>>> {
    return this.explainErrors(conversationId, () => this.handle(conversationId).query(rapViewsQuery));
  }

  /**
   * The conversation's workflow as Temporal describes it (status, start and close time, task queue):
   * from Temporal rather than the workflow, so it answers for ended conversations and with no worker running.
   */
  async execution(conversationId: string): Promise<ConversationExecution> {
    const description = await this.explainErrors(conversationId, () =>
      this.handle(conversationId).describe(),
    );
    return {
      conversationId,
      executionStatus: description.status.name,
      startTime: description.startTime,
      ...(description.closeTime ? { closeTime: description.closeTime } : {}),
      taskQueue: description.taskQueue,
      workflowType: description.type,
    };
  }

  /**
   * Waits until a worker has admitted or refused the conversation (in its first workflow task), at
   * most `waitMs`: `admitted`, `refused` with the worker's reason, or `untaken` when no worker
   * decided in that time (one will check it when it does).
   */
  async admission(
    conversationId: string,
    waitMs = 10_000,
  ): Promise<{ admitted: true } | { admitted: false; reason: string } | { untaken: true }> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const description = await this.handle(conversationId).describe();
      if (description.status.name !== 'RUNNING') {
        const reason = await this.failureOf(conversationId);
        return reason === undefined ? { admitted: true } : { admitted: false, reason };
      }
      const { history } = await this.client.workflowService.getWorkflowExecutionHistory({
        namespace: this.client.options.namespace,
        execution: { workflowId: conversationId, runId: description.runId },
        maximumPageSize: 64,
      });
      // The admission is the run's first local activity, and its marker is recorded by the task
      // that acts on it (and fails the run on a refusal). A completed task alone says nothing: a
      // worker completes a task that waits on a slow local activity to keep it alive.
      const events = history?.events ?? [];
      const closed = events.some(
        (event) =>
          event.workflowExecutionFailedEventAttributes || event.workflowExecutionTerminatedEventAttributes,
      );
      if (
        !closed &&
        events.some((event) => event.markerRecordedEventAttributes?.markerName === LOCAL_ACTIVITY_MARKER)
      )
        return { admitted: true };
      if (Date.now() >= deadline) return { untaken: true };
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /**
   * Why a closed conversation failed or was terminated, from the last event of its history (one
   * event read, however long the history); undefined while it runs or when it completed.
   */
  async failureOf(conversationId: string): Promise<string | undefined> {
    const { history } = await this.client.workflowService.getWorkflowExecutionHistoryReverse({
      namespace: this.client.options.namespace,
      execution: { workflowId: assertConversationId(conversationId) },
      maximumPageSize: 1,
    });
    const last = history?.events?.[0];
    return (
      last?.workflowExecutionFailedEventAttributes?.failure?.message ??
      last?.workflowExecutionTerminatedEventAttributes?.reason ??
      undefined
    );
  }

  /** The `status` query: idle or running, runs, queued messages, the newest event's sequence number, … */
  status(conversationId: string): Promise<ConversationStatusSummary> {
    return this.explainErrors(conversationId, () => this.read(conversationId, statusQuery));
  }

  /**
   * What an agent has spent today (UTC, by this machine's clock) across the fleet, from its daily
   * ledger: 0 when no model call of the agent reported to one today (or its workers set no daily budget).
   */
  async agentSpentToday(agentId: string, now = Date.now()): Promise<DailySpent> {
    const day = utcDayOf(now);
    try {
      return await this.client.workflow
        .getHandle(agentDailyBudgetWorkflowId(agentId, day))
        .query(agentDailyBudgetStatusQuery);
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) return { agentId, day, tokens: 0 };
      throw error;
    }
  }

  /** The `state` query: the status with the whole transcript, events and approvals. */
  state(conversationId: string): Promise<ConversationState> {
    return this.explainErrors(conversationId, () => this.read(conversationId, stateQuery));
  }

  /** The approvals the run in progress waits for, oldest first, with their whole arguments. */
  pendingApprovals(conversationId: string): Promise<PendingApproval[]> {
    return this.explainErrors(conversationId, () => this.read(conversationId, pendingApprovalsQuery));
  }

  /** The events recorded after `afterSeq`, as they are now (`watch` follows them as they come). */
  events(conversationId: string, afterSeq = 0): Promise<AgentEvent[]> {
    return this.explainErrors(conversationId, () => this.read(conversationId, eventsQuery, afterSeq));
  }

  /**
   * A user message for a conversation that is running, as a plain signal: unlike `send`, it never
   * starts one, and one that has ended is ConversationEndedError. Returns the newest event's
   * sequence number before the message, and the runs that began before it (as `Sent` says them).
   */
  async signalMessage(
    conversationId: string,
    message: UserMessageInput,
  ): Promise<{ afterSeq: number; afterRun: number }> {
    const execution = await this.execution(conversationId);
    if (execution.executionStatus !== 'RUNNING') {
      throw new ConversationEndedError(conversationId, execution.executionStatus.toLowerCase());
    }
    const handle = this.handle(conversationId);
    const { lastSeq, runCount } = await handle.query(statusQuery);
    try {
      await handle.signal(userMessageSignal, message);
    } catch (error) {
      if (error instanceof WorkflowNotFoundError) throw new ConversationEndedError(conversationId, 'ended');
      throw error;
    }
    return { afterSeq: lastSeq, afterRun: runCount };
  }

  /** The last `last` messages of the transcript, read page by page, with where they start. */
  async transcriptTail(
    conversationId: string,
    last: number,
  ): Promise<{ transcriptLength: number; from: number; messages: Message[] }> {
    const handle = this.handle(conversationId);
    const { transcriptLength, transcriptGeneration = 0 } = await this.status(conversationId);
    const from = Math.max(0, transcriptLength - last);
    const messages: Message[] = [];
    let next: number | null = from;
    while (next !== null && next < transcriptLength) {
      const page: TranscriptPage = await handle.query(transcriptPageQuery, {
        generation: transcriptGeneration,
        from: next,
        to: transcriptLength,
      });
      messages.push(...page.messages);
      next = page.next;
    }
    return { transcriptLength, from, messages };
  }

  /** Sets the approval mode for the calls asked about from now on; refused (UpdateRefusedError) once the conversation is ending. */
  async setApprovalMode(
    conversationId: string,
    input: ApprovalModeInput,
  ): Promise<{ mode: ApprovalModeInput['mode'] }> {
    const parsed = ApprovalModeInputSchema.safeParse(input);
    if (!parsed.success) throw invalidInput('approval mode', parsed.error);
    return this.update(conversationId, 'setApprovalMode', () =>
      this.handle(conversationId).executeUpdate(setApprovalModeUpdate, { args: [parsed.data] }),
    );
  }

  /** Ends the conversation after the run in progress and any queued messages (the `end` signal). */
  async end(conversationId: string, reason?: string): Promise<void> {
    await this.explainErrors(conversationId, () => this.handle(conversationId).signal(endSignal, { reason }));
  }

  /** Open conversations on this client's task queue, from Temporal visibility (which may lag by a moment). */
  async *list(): AsyncGenerator<ConversationListing> {
    const query = `WorkflowType = '${CONVERSATION_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running' AND TaskQueue = '${this.taskQueue.replace(/'/g, "\\'")}'`;
    for await (const execution of this.client.workflow.list({ query })) {
      yield {
        conversationId: execution.workflowId,
        startTime: execution.startTime,
        taskQueue: execution.taskQueue,
      };
    }
  }

  /**
   * The conversation's events as they happen, with the progress of running tools as
   * `tool_execution_update` events and the text of model calls as `model_text` events (made from
   * heartbeat details, or handed over live by a worker in this process; they carry the `seq` of the
   * event before them). Ends after `until` matches or when the conversation ends, also when it has
   * ended and no worker answers for it any more (its last events then go unseen).
   */
  async *watch(conversationId: string, watchOptions: WatchOptions = {}): AsyncGenerator<AgentEvent, void> {
    yield* this.watchEvents(conversationId, watchOptions, WATCH_QUERY_RETRY_MS);
  }

  /**
   * Follows one run to its end: the conversation's events after `afterSeq` as `watch` yields them
   * (model text and tool progress included), until the `run_finished` of the run `target` names
   * (see RunSought; a steering message joins the run it steers, and following goes on to that
   * run's end: `endsRun` decides). Returns how following ended (`RunEnd`): the run finished, with that event; the
   * conversation ended first (with why, when it failed); or `signal` stopped it. A conversation
   * that has ended when no worker answers for it any more is no error: what Temporal holds of it
   * says how the run ended (its result carries its last run's outcome and answer).
   */
  async *followRun(target: RunToFollow, options: FollowRunOptions = {}): AsyncGenerator<AgentEvent, RunEnd> {
    const { conversationId, afterSeq, messageId, run, afterRun } = target;
    let sought: RunSought = {
      ...(messageId !== undefined ? { messageId } : {}),
      ...(run !== undefined ? { run } : {}),
      ...(afterRun !== undefined ? { afterRun } : {}),
    };
    let lastSeq = afterSeq;
    const watched: { end?: WatchEnd } = {};
    const watchOptions: WatchOptions = {
      afterSeq,
      ...(options.pollMs ? { pollMs: options.pollMs } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    };
    try {
      for await (const event of this.watchEvents(
        conversationId,
        watchOptions,
        FOLLOW_AFTER_END_MS,
        watched,
      )) {
        lastSeq = event.seq;
        sought = learnRun(sought, event);
        yield event;
        if (endsRun(event, sought)) return { how: 'finished', event, from: 'events' };
      }
    } catch (error) {
      // A call in flight when `signal` stopped following fails; Temporal takes no more queries for a closed conversation.
      if (!options.signal?.aborted && !(error instanceof ConversationEndedError)) throw error;
    }
    if (options.signal?.aborted) return { how: 'stopped' };
    return this.endedRun(conversationId, sought, lastSeq, watched.end !== 'closed');
  }

  /**
   * `watch`, with how it ended put in `watched`; `afterEndMs`: how long events are asked for once
   * the conversation has ended.
   */
  private async *watchEvents(
    conversationId: string,
    watchOptions: WatchOptions,
    afterEndMs: number,
    watched: { end?: WatchEnd } = {},
  ): AsyncGenerator<AgentEvent, void> {
    // Listening before the first call to Temporal, so text streamed meanwhile is not missed.
    const liveText = listenEarly(this.liveText, conversationId);
    try {
      watched.end = yield* this.watchFrom(conversationId, watchOptions, liveText, afterEndMs);
    } catch (error) {
      if (!(error instanceof EndedUnansweredError)) throw error;
      watched.end = 'unanswered';
    } finally {
      liveText.close();
    }
  }

  private async *watchFrom(
    conversationId: string,
    watchOptions: WatchOptions,
    liveText: ModelTextSource,
    afterEndMs: number,
  ): AsyncGenerator<AgentEvent, WatchEnd> {
    const handle = this.handle(conversationId);
    const { signal } = watchOptions;
    const status = await this.explainErrors(conversationId, () =>
      queryWhileRunning(handle, () => handle.query(statusQuery), { signal, afterEndMs }),
    );
    let lastSeq = watchOptions.afterSeq ?? status.lastSeq;
    let run = status.runCount;
    const poll = pollConversation(handle, lastSeq, {
      pollMs: watchOptions.pollMs ?? DEFAULT_POLL_MS,
      liveText,
      afterEndMs,
      ...(signal ? { signal } : {}),
    });
    for await (const item of poll) {
      if (item.kind === 'event') {
        lastSeq = item.event.seq;
        run = item.event.run;
        yield item.event;
        if (watchOptions.until?.(item.event)) return 'until';
        continue;
      }
      if (item.kind === 'text') {
        const { call, offset, text, at } = item;
        yield { type: 'model_text', seq: lastSeq, at, run, call, offset, text };
        continue;
      }
      const { progress } = item;
      if (progress.kind !== 'tool') continue;
      yield {
        type: 'tool_execution_update',
        seq: lastSeq,
        at: item.heartbeatAt,
        run,
        toolCallId: progress.toolCallId,
        toolName: progress.toolName,
        ...(progress.text !== undefined ? { text: progress.text } : {}),
        ...(progress.details !== undefined ? { details: progress.details } : {}),
      };
    }
    return 'closed';
  }

  /**
   * How the run sought ended, by what Temporal holds of a conversation that has closed: its result
   * (how its last run ended) when `eventsUnread` and that run is the one sought, else why it closed.
   */
  private async endedRun(
    conversationId: string,
    sought: RunSought,
    lastSeq: number,
    eventsUnread: boolean,
  ): Promise<RunEnd> {
    const execution = await this.execution(conversationId);
    const { executionStatus } = execution;
    if (executionStatus === 'RUNNING') {
      throw new Error(`following conversation ${conversationId} ended while it still runs`);
    }
    if (executionStatus === 'COMPLETED' && eventsUnread) {
      const result = EndedConversationSchema.safeParse(await this.handle(conversationId).result());
      const closedAt = execution.closeTime?.getTime() ?? Date.now();
      const event = result.success ? runEndFromResult(sought, result.data, { lastSeq, closedAt }) : undefined;
      if (event) return { how: 'finished', event, from: 'result' };
    }
    const failure = await this.failureOf(conversationId).catch(() => undefined);
    return { how: 'conversation_ended', executionStatus, ...(failure ? { failure } : {}) };
  }

  private handle(conversationId: string): WorkflowHandle {
    return this.client.workflow.getHandle(assertConversationId(conversationId));
  }

  /** ConversationNotFoundError or ConversationEndedError unless the conversation runs. */
  private async assertRunning(conversationId: string): Promise<void> {
    const description = await this.explainErrors(conversationId, () =>
      this.handle(conversationId).describe(),
    );
    if (description.status.name !== 'RUNNING') {
      throw new ConversationEndedError(conversationId, description.status.name.toLowerCase());
    }
  }

  /** Runs an update, turning a validator's refusal into UpdateRefusedError and a missing or closed workflow into ours. */
  private async update<T>(conversationId: string, name: string, call: () => Promise<T>): Promise<T> {
    try {
      return await this.explainErrors(conversationId, call);
    } catch (error) {
      throw unwrapUpdateFailure(conversationId, name, error);
    }
  }

  /** A query, asked again for a while when the worker that had the conversation cached is gone. */
  private read<Args extends unknown[], T>(
    conversationId: string,
    query: QueryDefinition<T, Args>,
    ...args: Args
  ): Promise<T> {
    const handle = this.handle(conversationId);
    return queryRetried(() => handle.query(query, ...args), { withinMs: READ_QUERY_RETRY_MS });
  }

  /** Temporal says "not found" both for an unknown workflow and, to updates and signals, a closed one: say which. */
  private async explainErrors<T>(conversationId: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof WorkflowNotFoundError)) throw error;
      const description = await this.handle(conversationId)
        .describe()
        .catch((describeError: unknown) => {
          if (describeError instanceof WorkflowNotFoundError)
            throw new ConversationNotFoundError(conversationId);
          throw describeError;
        });
      if (description.status.name !== 'RUNNING') {
        throw new ConversationEndedError(conversationId, description.status.name.toLowerCase());
      }
      throw error;
    }
  }
}

/**
 * What a client may not start a conversation with, said before the worker refuses it: a place in a
 * tree of sub-agents, which only Temporal's parent links give a conversation.
 */
function assertClientStart(conversationId: string, options: ConversationOptionsInput): void {
  if (options.ancestors !== undefined) {
    throw new InvalidInputError('conversation options', [
      "ancestors is set by the runtime for a sub-agent's conversation, never by a client",
    ]);
  }
  if (conversationId.includes('.sub-')) {
    throw new InvalidInputError(`conversation id ${JSON.stringify(conversationId)}`, [
      'ids with ".sub-" belong to sub-agents, which only their parent conversation starts',
    ]);
  }
}

/**
 * The error a caller should see for a failed update: a validator's refusal (which arrives as
 * WorkflowUpdateFailedError wrapping the validator's error) becomes UpdateRefusedError; anything
 * else is returned unchanged.
 */
function unwrapUpdateFailure(conversationId: string, update: string, error: unknown): unknown {
  if (!(error instanceof WorkflowUpdateFailedError)) return error;
  const cause = error.cause;
  const reason = cause instanceof Error && cause.message ? cause.message : error.message;
  return new UpdateRefusedError(conversationId, update, reason);
}
