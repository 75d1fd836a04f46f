import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { PayloadConverter } from '@temporalio/common';
import { type DecodedConversationHistory, readDecodedHistory } from '../history/decoded-conversation-history';
import type { A2APushConfig, A2APushConfigChange, A2APushConfigReceipt } from '../shared/a2a-push';
import type { ApprovalDecision, PendingApproval } from '../shared/approvals';
import type { ClientToolReceipt, ClientToolResult, PendingClientToolCall } from '../shared/client-tools';
import type { CompactionReceipt } from '../shared/compaction';
import { DEFAULT_TASK_QUEUE } from '../shared/constants';
import type {
  AbortInput,
  AbortReceipt,
  ApprovalModeInput,
  ApprovalReceipt,
  ConversationState,
  ConversationStatusSummary,
  MessageReceipt,
  UserMessageInput,
} from '../shared/conversation-api';
import type { ConversationOptionsInput } from '../shared/conversation-options';
import type { DailySpent } from '../shared/daily-budget';
import type { AgentEvent } from '../shared/events';
import type { Message } from '../shared/messages';
import type { UserChoiceAnswer } from '../shared/rap';
import { assertConversationId } from '../shared/ids';
import { ClientContext } from './client-context';
import { type ConversationOverview, type OverviewFilter, overview } from './conversation-overview';
import * as control from './conversation-control';
import * as record from './conversation-execution';
import type { Admission, ConversationExecution, ConversationListing } from './conversation-execution';
import * as follow from './conversation-follow';
import type { FollowRunOptions, RunToFollow, WatchOptions } from './conversation-follow';
import * as messages from './conversation-messages';
import type { SendOptions, Sent, SteerOptions, Steered } from './conversation-messages';
import * as reads from './conversation-reads';
import * as starts from './conversation-start';
import { type ModelTextSource, processLiveModelText } from './live-model-text';
import type { RunEnd, RunFinishedEvent } from './run-end';

export type { ConversationExecution, ConversationListing } from './conversation-execution';
export type { FollowRunOptions, RunToFollow, WatchOptions } from './conversation-follow';
export type { SendOptions, Sent, SteerOptions, Steered } from './conversation-messages';

/**
 * The typed way for a service to talk to conversations; everything goes through Temporal. Each
 * method is carried out in the module for its kind of call: starting (`conversation-start.ts`),
 * messages (`conversation-messages.ts`), control (`conversation-control.ts`), queries
 * (`conversation-reads.ts`), what Temporal holds of the workflow (`conversation-execution.ts`) and
 * following (`conversation-follow.ts`).
 */
export class AgentClient {
  private readonly context: ClientContext;

  /**
   * `liveText`: where model activities of this process hand over their text as it arrives, so
   * watchers see it at once; text of workers elsewhere comes with their heartbeats.
   */
  constructor(
    client: Client,
    /** The task queue conversations are started on (and `list` lists). */
    readonly taskQueue: string = DEFAULT_TASK_QUEUE,
    liveText: ModelTextSource = processLiveModelText,
  ) {
    this.context = new ClientContext(client, taskQueue, liveText);
  }

  /** The Temporal client every call goes through: its connection, namespace and data converter. */
  get temporal(): Client {
    return this.context.client;
  }

  /**
   * Starts a conversation that waits for its first message; returns its id. Refuses an id already
   * used (ConversationExistsError) and options or an id a client may not give (InvalidInputError).
   * With `requestKey`, a start repeated with the same key (a retry) is answered as done; one with
   * another key still finds the id used.
   */
  start(
    conversationId = `conv-${randomUUID()}`,
    options: ConversationOptionsInput = {},
    startOptions: starts.StartOptions = {},
  ): Promise<string> {
    return starts.start(this.context, conversationId, options, startOptions);
  }

  /**
   * Starts a conversation that goes on from state it is handed (`carried`, as continue-as-new hands
   * it on; `fork` builds it from another conversation's history), waiting for its next message.
   * Refuses like `start`. Workers accept carried state from a client only as far as their
   * AGENT_ACCEPT_CARRIED says, or, for a fork, once they have checked it against the original's history.
   */
  startCarried(
    conversationId: string,
    options: ConversationOptionsInput,
    carried: Record<string, unknown>,
  ): Promise<string> {
    return starts.startCarried(this.context, conversationId, options, carried);
  }

  /**
   * Sends a user message, starting the conversation if it does not exist (unless `start: false`).
   * Refuses an ended conversation (ConversationEndedError). `followRun(sent)` follows the run that
   * takes it.
   */
  send(conversationId: string, text: string, sendOptions: SendOptions = {}): Promise<Sent> {
    return messages.send(this.context, conversationId, text, sendOptions);
  }

  /**
   * Sends a message (starting the conversation if need be) and waits for the run that takes it to
   * finish: its `run_finished` event, whose `outcome` says whether the model answered. Throws when
   * the conversation ends, fails or is terminated before the run finishes. Approvals the run waits
   * for are decided meanwhile by whoever decides them.
   */
  async ask(conversationId: string, text: string, sendOptions: SendOptions = {}): Promise<RunFinishedEvent> {
    const following = this.followRun(await this.send(conversationId, text, sendOptions));
    let next = await following.next();
    while (!next.done) next = await following.next();
    const end = next.value;
    if (end.how === 'finished') return end.event;
    const why =
      end.how === 'conversation_ended'
        ? `${end.executionStatus}${end.failure ? `: ${end.failure}` : ''}`
        : end.how;
    throw new Error(`conversation ${conversationId} ended before the run finished (${why})`);
  }

  /**
   * Steers the run in progress: its running tools are cancelled (keeping what they return), then the
   * message joins the transcript and the run goes on. With no run in progress it starts one. Never
   * starts a conversation: one that does not exist is ConversationNotFoundError.
   */
  steer(conversationId: string, text: string, steerOptions: SteerOptions = {}): Promise<Steered> {
    return messages.steer(this.context, conversationId, text, steerOptions);
  }

  /**
   * A user message for a conversation that is running, as a plain signal: unlike `send`, it never
   * starts one, and one that has ended is ConversationEndedError. Returns the newest event's
   * sequence number before the message, and the runs that began before it (as `Sent` says them).
   */
  signalMessage(
    conversationId: string,
    message: UserMessageInput,
  ): Promise<{
    /** The newest event's sequence number before the message. */
    afterSeq: number;
    /** The newest run that began before the message. */
    afterRun: number;
  }> {
    return messages.signalMessage(this.context, conversationId, message);
  }

  /** Summarises the older turns now (at the next turn boundary of a run in progress); returns once done. */
  compact(conversationId: string): Promise<CompactionReceipt> {
    return control.compact(this.context, conversationId);
  }

  /** Aborts the run in progress; the conversation then waits for the next message. Refused when no run is in progress. */
  abort(conversationId: string, input: AbortInput = {}): Promise<AbortReceipt> {
    return control.abort(this.context, conversationId, input);
  }

  /**
   * Decides a pending approval. Refused (UpdateRefusedError, saying why) for an unknown or already
   * decided `toolCallId` and for an approver the conversation does not list.
   */
  approve(conversationId: string, decision: ApprovalDecision): Promise<ApprovalReceipt> {
    return control.approve(this.context, conversationId, decision);
  }

  /**
   * Delivers the result of a client tool call (a tool the sender of a message offered to carry out
   * itself) to the call that waits for it. Refused (UpdateRefusedError) for a call that waits for
   * nothing (unknown, or ended by a steer, an abort or the approval timeout). A call answered before
   * is answered again with the first delivery's receipt: the first result is the one taken.
   */
  answerClientTool(conversationId: string, result: ClientToolResult): Promise<ClientToolReceipt> {
    return control.answerClientTool(this.context, conversationId, result);
  }

  /** The client tool calls waiting for their sender's result, oldest first, with their whole arguments. */
  pendingClientToolCalls(conversationId: string): Promise<PendingClientToolCall[]> {
    return reads.pendingClientToolCalls(this.context, conversationId);
  }

  /**
   * Answers a RAP tool's `user_choice` (the `user_choice_requested` event): the index chosen, or the
   * tool's default when `selected` is absent. Refused for a call with no pending choice or an index out of range.
   */
  answerUserChoice(
    conversationId: string,
    answer: UserChoiceAnswer,
  ): Promise<{
    /** The index of the choice taken. */
    selected: number;
  }> {
    return control.answerUserChoice(this.context, conversationId, answer);
  }

  /** Sets the approval mode for the calls asked about from now on; refused (UpdateRefusedError) once the conversation is ending. */
  setApprovalMode(
    conversationId: string,
    input: ApprovalModeInput,
  ): Promise<{
    /** The mode now. */
    mode: ApprovalModeInput['mode'];
  }> {
    return control.setApprovalMode(this.context, conversationId, input);
  }

  /**
   * Sets or deletes an A2A push notification configuration of a task (a message the conversation
   * took). Refused (UpdateRefusedError) for a message it never took, an ended conversation, too many
   * configurations, and a delete of one that is not there.
   */
  changeA2APushConfig(conversationId: string, change: A2APushConfigChange): Promise<A2APushConfigReceipt> {
    return control.changeA2APushConfig(this.context, conversationId, change);
  }

  /** The A2A push notification configurations `owner` set on the task of message `messageId`. */
  a2aPushConfigs(
    conversationId: string,
    target: { messageId: string; owner: string },
  ): Promise<A2APushConfig[]> {
    return reads.a2aPushConfigs(this.context, conversationId, target);
  }

  /** Ends the conversation after the run in progress and any queued messages (the `end` signal). */
  end(conversationId: string, reason?: string): Promise<void> {
    return control.end(this.context, conversationId, reason);
  }

  /** The `status` query: idle or running, runs, queued messages, the newest event's sequence number, … */
  status(conversationId: string): Promise<ConversationStatusSummary> {
    return reads.status(this.context, conversationId);
  }

  /** The `state` query: the status with the whole transcript, events and approvals. */
  state(conversationId: string): Promise<ConversationState> {
    return reads.state(this.context, conversationId);
  }

  /** The approvals the run in progress waits for, oldest first, with their whole arguments. */
  pendingApprovals(conversationId: string): Promise<PendingApproval[]> {
    return reads.pendingApprovals(this.context, conversationId);
  }

  /** The events recorded after `afterSeq`, as they are now (`watch` follows them as they come). */
  events(conversationId: string, afterSeq = 0): Promise<AgentEvent[]> {
    return reads.events(this.context, conversationId, afterSeq);
  }

  /**
   * Where the conversation took the message with this id (the events and runs before it), or null
   * when it has not taken it (yet), remembers it no more (it keeps its latest 512), or its worker
   * keeps no receipts.
   */
  messageReceipt(conversationId: string, messageId: string): Promise<MessageReceipt | null> {
    return reads.messageReceipt(this.context, conversationId, messageId);
  }

  /** The latest content of each view RAP tools pushed to the conversation, by view type. */
  views(conversationId: string): Promise<Record<string, Record<string, unknown>>> {
    return reads.views(this.context, conversationId);
  }

  /** The last `last` messages of the transcript, read page by page, with where they start. */
  transcriptTail(
    conversationId: string,
    last: number,
  ): Promise<{
    /** Messages in the whole transcript. */
    transcriptLength: number;
    /** The index of the first message returned. */
    from: number;
    /** The messages, oldest first. */
    messages: Message[];
  }> {
    return reads.transcriptTail(this.context, conversationId, last);
  }

  /**
   * What an agent has spent today (UTC, by this machine's clock) across the fleet, from its daily
   * ledger: 0 when no model call of the agent reported to one today (or its workers set no daily budget).
   */
  agentSpentToday(agentId: string, now = Date.now()): Promise<DailySpent> {
    return reads.agentSpentToday(this.context, agentId, now);
  }

  /**
   * The conversation's workflow as Temporal describes it (status, start and close time, task queue):
   * from Temporal rather than the workflow, so it answers for ended conversations and with no worker running.
   */
  execution(conversationId: string): Promise<ConversationExecution> {
    return record.execution(this.context, conversationId);
  }

  /** Open conversations on this client's task queue, from Temporal visibility (which may lag by a moment). */
  list(): AsyncGenerator<ConversationListing> {
    return record.list(this.context);
  }

  /** Conversations, ended ones too, with agent, status and last activity, newest first (visibility may lag). */
  overview(filter?: OverviewFilter): Promise<ConversationOverview[]> {
    return overview(this.context, filter);
  }

  /**
   * Waits until a worker has admitted or refused the conversation (in its first workflow task), at
   * most `waitMs`: `admitted`, `refused` with the worker's reason, or `untaken` when no worker
   * decided in that time (one will check it when it does).
   */
  admission(conversationId: string, waitMs = 10_000): Promise<Admission> {
    return record.admission(this.context, conversationId, waitMs);
  }

  /**
   * Why a closed conversation failed or was terminated, from the last event of its history (one
   * event read, however long the history); undefined while it runs or when it completed.
   */
  failureOf(conversationId: string): Promise<string | undefined> {
    return record.failureOf(this.context, conversationId);
  }

  /**
   * What Temporal holds of the conversation: every execution's history (the newest `latest`),
   * oldest first, payloads decoded with this client's codecs, and the payload converter that reads
   * them (as `history`, `fork` and the console read past runs).
   */
  async history(
    conversationId: string,
    latest?: number,
  ): Promise<
    DecodedConversationHistory & {
      /** The payload converter that reads the histories' payloads. */
      converter: PayloadConverter;
    }
  > {
    const decoded = await readDecodedHistory(
      this.context.client,
      assertConversationId(conversationId),
      latest,
    );
    return { ...decoded, converter: this.context.client.options.loadedDataConverter.payloadConverter };
  }

  /**
   * The conversation's events as they happen, with the progress of running tools as
   * `tool_execution_update` events and the text of model calls as `model_text` events (made from
   * heartbeat details, or handed over live by a worker in this process; they carry the `seq` of the
   * event before them). Ends after `until` matches or when the conversation ends, also when it has
   * ended and no worker answers for it any more (its last events then go unseen).
   */
  watch(conversationId: string, watchOptions: WatchOptions = {}): AsyncGenerator<AgentEvent, void> {
    return follow.watch(this.context, conversationId, watchOptions);
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
  followRun(target: RunToFollow, options: FollowRunOptions = {}): AsyncGenerator<AgentEvent, RunEnd> {
    return follow.followRun(this.context, target, options);
  }
}
