import { DefaultPrompts } from './run-system-prompt';
import { CancellationScope, patched, workflowInfo } from '@temporalio/workflow';
import type { z } from 'zod';
import { DEFAULT_AGENT_ID } from '../shared/agent-id';
import { MAX_EVENTS_KEPT } from '../shared/constants';
import type {
  ApprovalModeInput,
  ConversationStatus,
  ConversationStatusSummary,
  LastRunSummary,
  UserMessageInput,
} from '../shared/conversation-api';
import type { ConversationOptions } from '../shared/conversation-options';
import type { Admission } from '../shared/worker-floors';
import type { UserMessage } from '../shared/messages';
import { schemaProblems } from '../shared/schema-problems';
import type { RapNotice } from '../shared/rap';
import type { ToolDescriptor } from '../shared/tool-descriptor';
import { noticeActivities } from './activity-proxies';
import { A2APushBook } from './a2a-push-book';
import { ApprovalBook } from './approval-book';
import { ClientToolCalls } from './client-tool-calls';
import { CompactionRequests } from './compaction';
import { ConversationBudget } from './conversation-budget';
import { type CheckedSignature, DecisionSignatures } from './decision-signatures';
import type { InputParsing } from './input-parsing';
import type { CarriedConversation } from './conversation-carry';
import { EventLog } from './event-log';
import { InFlightDeliveries } from './in-flight-deliveries';
import { RapThread } from './rap-thread';
import { RunControl } from './run-control';
import { type Intake, TakenMessages } from './taken-messages';
import { Transcript } from './transcript';
import { WebhookOutbox } from './webhook-outbox';
import { lookUpTools } from './worker-tools';
import { workflowTime } from './workflow-time';

/** Marks executions whose model calls consult and report to their agent's daily ledger. */
const AGENT_DAILY_BUDGET_PATCH = 'agent-daily-budget';
/** Marks executions that take a message id once and drop its repeats. */
const MESSAGE_ONCE_PATCH = 'message-once';

/** Events handed to the next run, so watchers and the `state` query still see recent history. */
const EVENTS_CARRIED = 100;

export function userMessageOf(input: UserMessageInput): UserMessage {
  return {
    role: 'user',
    content: input.text,
    messageId: input.messageId,
    ...(input.sender !== undefined ? { sender: input.sender } : {}),
    ...(input.images?.length ? { images: input.images } : {}),
    ...(input.clientTools?.length ? { clientTools: input.clientTools } : {}),
    timestamp: workflowTime(),
  };
}

/**
 * One conversation's state: its transcript, events, queued messages, run state, approvals, RAP
 * state and compaction requests. Every signal, update and query that reaches it is registered by
 * `installHandlers` (conversation-handlers.ts) and changes it through what it offers here.
 */
export class ConversationEntity {
  readonly conversationId = workflowInfo().workflowId;
  readonly transcript: Transcript;
  readonly events: EventLog;
  readonly queue: UserMessage[];
  readonly approvals: ApprovalBook;
  /** The signature rules for approvals and policy changes alike, and the signatures already spent. */
  readonly signatures: DecisionSignatures;
  readonly compactionRequests = new CompactionRequests();
  /** The default system prompt, written once an execution and day. */
  readonly defaultPrompts = new DefaultPrompts();
  readonly budget: ConversationBudget;
  readonly rap: RapThread;
  /** Client tool calls waiting for their sender's result. */
  readonly clientCalls: ClientToolCalls;
  /** The ids of the messages taken, so a message delivered again is dropped. */
  readonly taken: TakenMessages;
  /** Notifications under way: waited for before the conversation hands over or ends. */
  readonly deliveries = new InFlightDeliveries();
  /** A2A callers' push notification configurations, by task, and their notifications. */
  readonly push: A2APushBook;
  private state: ConversationStatus;
  private runs: number;
  private endAsked: boolean;
  private modeChanged = false;
  /** The run in progress, if any. */
  private running: RunControl | undefined;
  /** The worker's tools, listed once per execution. */
  private workerToolListing: ReadonlyMap<string, ToolDescriptor> | undefined;
  /** Deliveries to the worker's webhooks, when it has any. */
  private webhooks: WebhookOutbox | undefined;
  private rulesKnown = false;

  constructor(
    readonly options: ConversationOptions,
    private readonly carried: CarriedConversation | undefined,
    /** How signals and updates are read: strictly, or as runs recorded before that read them. */
    readonly inputs: InputParsing,
  ) {
    // A run paused between two turns to continue as new is still in progress: the new execution
    // says so from its first moment, before the worker's admission and the resumed turn.
    this.state = carried?.paused ? 'running' : 'idle';
    this.transcript = new Transcript(carried?.transcript);
    this.events = new EventLog(MAX_EVENTS_KEPT, carried?.events);
    this.queue = [...(carried?.queue ?? [])];
    this.runs = carried?.runCount ?? 0;
    this.endAsked = carried?.endRequested ?? false;
    this.signatures = new DecisionSignatures(carried?.usedSignatures);
    this.approvals = new ApprovalBook(
      this.conversationId,
      options.approval,
      this.events,
      this.signatures,
      carried?.standingApprovals,
    );
    this.rap = new RapThread(this.events, carried?.rap);
    this.clientCalls = new ClientToolCalls(options.approval.timeoutMs);
    this.budget = new ConversationBudget(
      options.budget,
      this.approvals,
      this.events,
      carried?.budget,
      (options.ancestors?.length ?? 0) > 0,
    );
    this.taken = new TakenMessages(patched(MESSAGE_ONCE_PATCH), carried?.takenMessages);
    this.push = new A2APushBook(
      this.conversationId,
      this.events,
      () => this.approvals.pendingApprovals(),
      this.deliveries,
      carried?.a2aPush,
    );
    this.events.onRecord((event) => this.push.eventRecorded(event));
  }

  /**
   * Takes a message into the conversation unless its id was taken before: a repeat of the same
   * message is dropped, another message under that id is a conflict. A new message's receipt says
   * where following its run begins: steering joins the run in progress, a message waits for the next.
   */
  takeMessage(input: UserMessageInput, as: 'message' | 'steering'): Intake {
    const joinsRun = as === 'steering' && this.running !== undefined;
    return this.taken.take(input, {
      afterSeq: this.events.lastSeq,
      afterRun: joinsRun ? this.runs - 1 : this.runs,
    });
  }

  get status(): ConversationStatus {
    return this.state;
  }

  /** `end` was asked for: the conversation ends once the run in progress, if any, is over. */
  get endRequested(): boolean {
    return this.endAsked;
  }

  requestEnd(): void {
    this.endAsked = true;
  }

  /** The worker's admission has given its rules (approvers' keys, floors) to this execution. */
  get workerRulesKnown(): boolean {
    return this.rulesKnown;
  }

  /** The approval mode was changed in this execution: the next one is started with the new mode. */
  get approvalModeChanged(): boolean {
    return this.modeChanged;
  }

  /** A checked change of the approval mode: its signature, if it needed one, is spent. */
  changeApprovalMode(mode: ApprovalModeInput['mode'], signature: CheckedSignature | undefined): void {
    this.approvals.setMode(mode === 'default' ? undefined : mode);
    this.signatures.spend(signature);
    this.modeChanged = true;
  }

  /** Runs so far, the one in progress included. */
  get runCount(): number {
    return this.runs;
  }

  /** The run in progress, if any. */
  get current(): RunControl | undefined {
    return this.running;
  }

  /** The worker's tools, once listed in this execution. */
  get tools(): ReadonlyMap<string, ToolDescriptor> | undefined {
    return this.workerToolListing;
  }

  /** Deliveries to the worker's webhooks, when it has any. */
  get outbox(): WebhookOutbox | undefined {
    return this.webhooks;
  }

  /**
   * What the worker holds this conversation to, from its admission: approval floors, approver keys
   * (decisions are then signed), and the webhooks its events are delivered to.
   */
  admitted(admission: Extract<Admission, { admitted: true }>): void {
    this.approvals.enforce(admission);
    this.signatures.requireKeys(admission.approverKeys);
    this.rulesKnown = true;
    // Only where the worker has a daily budget for the agent: other conversations schedule as before.
    if (admission.dailyTokenBudget !== undefined && patched(AGENT_DAILY_BUDGET_PATCH)) {
      this.budget.holdToDailyBudget(this.options.agentId ?? DEFAULT_AGENT_ID, admission.dailyTokenBudget);
    }
    if (!admission.webhooks) return;
    const outbox = new WebhookOutbox(
      this.conversationId,
      admission.webhooks,
      (toolCallId) => this.approvals.pendingApprovals().find((pending) => pending.toolCallId === toolCallId),
      this.deliveries,
    );
    this.webhooks = outbox;
    this.events.onRecord((event) => outbox.eventRecorded(event));
  }

  /** A run begins (or one paused for a hand-over resumes): steer and abort reach it until `runLeft`. */
  beginRun(resuming: boolean): RunControl {
    this.state = 'running';
    if (!resuming) this.runs++;
    this.budget.runStarted(this.runs);
    this.running = new RunControl(this.runs);
    return this.running;
  }

  /** The run's scope is left, however it went: nothing is in progress to steer or abort. */
  runLeft(): void {
    this.running = undefined;
  }

  /** The run is over: steering an abort overtook is not lost, it starts the next run. */
  runEnded(control: RunControl): void {
    this.queue.unshift(...control.takeSteering());
    this.state = 'idle';
  }

  /** The conversation is over: it takes no more messages, steering or decisions. */
  end(): void {
    this.state = 'ended';
  }

  /**
   * The worker's tools, listed once per execution (kept until the conversation continues as new);
   * what the listing had to say is said once, in the run that listed them.
   */
  async workerTools(run: number): Promise<ReadonlyMap<string, ToolDescriptor>> {
    if (this.workerToolListing) return this.workerToolListing;
    const listing = await lookUpTools();
    for (const message of listing.warnings) this.events.record(run, { type: 'warning', message });
    this.workerToolListing = listing.tools;
    return listing.tools;
  }

  get ending(): boolean {
    return this.status === 'ended' || this.endRequested;
  }

  /** Sends a notice to RAP tool servers; not waited for, and sent even from a cancelled run. */
  notify = (notice: RapNotice): void => {
    CancellationScope.nonCancellable(() => noticeActivities.sendRapNotice(notice)).catch(() => undefined);
  };

  /** Records why a signal was ignored: a signal, unlike an update, cannot be refused. */
  ignored(what: string, reason: string): void {
    this.events.record(this.runCount, { type: 'error', message: `${what} ignored: ${reason}` });
  }

  summary(): ConversationStatusSummary {
    return {
      status: this.status,
      runCount: this.runCount,
      queuedMessages: this.queue.length,
      transcriptLength: this.transcript.length,
      lastSeq: this.events.lastSeq,
      pendingApprovals: this.approvals.pendingCount,
      transcriptGeneration: this.transcript.currentGeneration,
      agentId: this.options.agentId ?? DEFAULT_AGENT_ID,
      root: this.options.ancestors?.[0] ?? this.conversationId,
      approvalMode: this.approvals.mode ?? 'default',
      budget: this.budget.status(),
      ...(this.carried?.forkedFrom ? { forkedFrom: this.carried.forkedFrom } : {}),
      ...lastRunOf(this.events),
    };
  }

  /** Everything the next execution needs to go on, the queue emptied into it. */
  carry(paused?: CarriedConversation['paused']): CarriedConversation {
    const takenMessages = this.taken.carry();
    const a2aPush = this.push.carry();
    return {
      transcript: this.transcript.carry(),
      events: this.events.carry(EVENTS_CARRIED),
      standingApprovals: this.approvals.standingDecisions(),
      queue: this.queue.splice(0),
      runCount: this.runs,
      endRequested: this.endAsked,
      continuations: (this.carried?.continuations ?? 0) + 1,
      rap: this.rap.carry(),
      ...(paused ? { paused } : {}),
      usedSignatures: this.signatures.carry(),
      budget: this.budget.carry(),
      ...(takenMessages ? { takenMessages } : {}),
      ...(a2aPush ? { a2aPush } : {}),
      ...(this.carried?.forkedFrom ? { forkedFrom: this.carried.forkedFrom } : {}),
    };
  }

  /** A handler's input as this execution reads inputs; throws its problems (a validator's refusal). */
  parse<T>(schema: z.ZodType<T>, value: unknown): T {
    const parsed = this.inputs.safeParse(schema, value);
    if (!parsed.success) throw new Error(schemaProblems(parsed.error));
    return parsed.data;
  }

  /** Handles a signal; what it throws is recorded as the reason the signal was ignored. */
  signalled(what: string, handle: () => unknown): void {
    try {
      handle();
    } catch (error) {
      this.ignored(what, (error as Error).message);
    }
  }
}

/** The latest finished run, as the status says it: its number, outcome and a refusal's words. */
function lastRunOf(events: EventLog): { lastRun?: LastRunSummary } {
  const finished = events.latest('run_finished');
  if (!finished) return {};
  const { run, outcome, refusal } = finished;
  return { lastRun: { run, outcome, ...(refusal !== undefined ? { refusal } : {}) } };
}
