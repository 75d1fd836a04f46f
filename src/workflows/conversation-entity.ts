import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  condition,
  patched,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { z } from 'zod';
import { DEFAULT_AGENT_ID } from '../shared/agent-id';
import { type ApprovalDecision, ApprovalDecisionSchema } from '../shared/approvals';
import type { CompactionReceipt } from '../shared/compaction';
import { MAX_EVENTS_KEPT, TRANSCRIPT_PAGE_BYTES } from '../shared/constants';
import {
  AbortInputSchema,
  type ApprovalModeInput,
  ApprovalModeInputSchema,
  type ConversationStatus,
  type ConversationStatusSummary,
  type SteerReceipt,
  type UserMessageInput,
  UserMessageInputSchema,
  abortSignal,
  abortUpdate,
  answerUserChoiceUpdate,
  approveSignal,
  approveUpdate,
  compactUpdate,
  endSignal,
  eventsQuery,
  pendingApprovalsQuery,
  rapMessageSignal,
  rapSubscriptionsQuery,
  rapViewsQuery,
  setApprovalModeUpdate,
  stateQuery,
  statusQuery,
  steerSignal,
  steerUpdate,
  transcriptPageQuery,
  userMessageSignal,
} from '../shared/conversation-api';
import type { ConversationOptions } from '../shared/conversation-options';
import type { Admission } from '../shared/worker-floors';
import type { UserMessage } from '../shared/messages';
import { schemaProblems } from '../shared/schema-problems';
import { signedApprovalModeText } from '../shared/signed-decisions';
import { type RapNotice, RapConversationMessageSchema, UserChoiceAnswerSchema } from '../shared/rap';
import type { ToolDescriptor } from '../shared/tool-descriptor';
import { noticeActivities } from './activity-proxies';
import { setUpdateHandlerHeldOnReplay } from './held-on-replay';
import { ApprovalBook } from './approval-book';
import { CompactionRequests } from './compaction';
import { ConversationBudget } from './conversation-budget';
import { type CheckedSignature, DecisionSignatures } from './decision-signatures';
import type { InputParsing } from './input-parsing';
import type { CarriedConversation } from './conversation-carry';
import { EventLog } from './event-log';
import { RapThread } from './rap-thread';
import { RunControl } from './run-control';
import { Transcript } from './transcript';
import { WebhookOutbox } from './webhook-outbox';
import { lookUpTools } from './worker-tools';
import { workflowTime } from './workflow-time';

/** Marks executions whose model calls consult and report to their agent's daily ledger. */
const AGENT_DAILY_BUDGET_PATCH = 'agent-daily-budget';

/** How much each approval mode asks for: a change to a lower one is a decision. */
const MODE_STRICTNESS: Record<ApprovalModeInput['mode'], number> = { auto: 0, default: 1, ask: 2 };

/** Events handed to the next run, so watchers and the `state` query still see recent history. */
const EVENTS_CARRIED = 100;

export function userMessageOf(input: UserMessageInput): UserMessage {
  return {
    role: 'user',
    content: input.text,
    messageId: input.messageId,
    ...(input.sender !== undefined ? { sender: input.sender } : {}),
    ...(input.images?.length ? { images: input.images } : {}),
    timestamp: workflowTime(),
  };
}

/**
 * One conversation's state: its transcript, events, queued messages, run state, approvals, RAP
 * state and compaction requests, and every signal, update and query that reaches it, registered
 * in `installHandlers`. Steer, abort and approve come both as signals (for senders that only have
 * the Temporal CLI) and as updates whose validators refuse what the signal would ignore, so a
 * refused request never touches state or history.
 */
export class ConversationEntity {
  readonly conversationId = workflowInfo().workflowId;
  readonly transcript: Transcript;
  readonly events: EventLog;
  readonly queue: UserMessage[];
  readonly approvals: ApprovalBook;
  /** The signature rules for approvals and policy changes alike, and the signatures already spent. */
  readonly signatures: DecisionSignatures;
  /** Set once the approval mode was changed in this execution: the next one is started with the new mode. */
  approvalModeChanged = false;
  readonly compactionRequests = new CompactionRequests();
  readonly budget: ConversationBudget;
  readonly rap: RapThread;
  private state: ConversationStatus;
  private runs: number;
  endRequested: boolean;
  /** The run in progress, if any. */
  private running: RunControl | undefined;
  /** The worker's tools, listed once per execution. */
  private workerToolListing: ReadonlyMap<string, ToolDescriptor> | undefined;
  /** Deliveries to the worker's webhooks, when it has any. */
  private webhooks: WebhookOutbox | undefined;
  /** The worker's admission has given its rules (approvers' keys, floors) to this execution. */
  private workerRulesKnown = false;

  constructor(
    readonly options: ConversationOptions,
    private readonly carried: CarriedConversation | undefined,
    /** How signals and updates are read: strictly, or as runs recorded before that read them. */
    private readonly inputs: InputParsing,
  ) {
    // A run paused between two turns to continue as new is still in progress: the new execution
    // says so from its first moment, before the worker's admission and the resumed turn.
    this.state = carried?.paused ? 'running' : 'idle';
    this.transcript = new Transcript(carried?.transcript);
    this.events = new EventLog(MAX_EVENTS_KEPT, carried?.events);
    this.queue = [...(carried?.queue ?? [])];
    this.runs = carried?.runCount ?? 0;
    this.endRequested = carried?.endRequested ?? false;
    this.signatures = new DecisionSignatures(carried?.usedSignatures);
    this.approvals = new ApprovalBook(
      this.conversationId,
      options.approval,
      this.events,
      this.signatures,
      carried?.standingApprovals,
    );
    this.rap = new RapThread(this.events, carried?.rap);
    this.budget = new ConversationBudget(options.budget, this.approvals, this.events, carried?.budget);
  }

  get status(): ConversationStatus {
    return this.state;
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
    this.workerRulesKnown = true;
    // Only where the worker has a daily budget for the agent: other conversations schedule as before.
    if (admission.dailyTokenBudget !== undefined && patched(AGENT_DAILY_BUDGET_PATCH)) {
      this.budget.holdToDailyBudget(this.options.agentId ?? DEFAULT_AGENT_ID, admission.dailyTokenBudget);
    }
    if (!admission.webhooks) return;
    const outbox = new WebhookOutbox(this.conversationId, admission.webhooks, (toolCallId) =>
      this.approvals.pendingApprovals().find((pending) => pending.toolCallId === toolCallId),
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
    };
  }

  /** Everything the next execution needs to go on, the queue emptied into it. */
  carry(paused?: CarriedConversation['paused']): CarriedConversation {
    return {
      transcript: this.transcript.carry(),
      events: this.events.carry(EVENTS_CARRIED),
      standingApprovals: this.approvals.standingDecisions(),
      queue: this.queue.splice(0),
      runCount: this.runs,
      endRequested: this.endRequested,
      continuations: (this.carried?.continuations ?? 0) + 1,
      rap: this.rap.carry(),
      ...(paused ? { paused } : {}),
      usedSignatures: this.signatures.carry(),
      budget: this.budget.carry(),
      ...(this.carried?.forkedFrom ? { forkedFrom: this.carried.forkedFrom } : {}),
    };
  }

  installHandlers(): void {
    setHandler(userMessageSignal, (message) => {
      const parsed = this.inputs.safeParse(UserMessageInputSchema, message);
      if (!parsed.success) {
        this.ignored('userMessage', parsed.error.message);
        return;
      }
      this.queue.push(userMessageOf(parsed.data));
    });
    setHandler(endSignal, () => {
      this.endRequested = true;
    });

    const checkSteer = (input: unknown): UserMessageInput => {
      if (this.ending) throw new Error('the conversation is ending');
      return this.parse(UserMessageInputSchema, input);
    };
    const steer = (input: UserMessageInput): SteerReceipt => {
      const message = userMessageOf(input);
      const run = this.current;
      if (run) run.steer(message);
      else this.queue.push(message);
      return { messageId: message.messageId, interrupting: run !== undefined };
    };
    setHandler(steerSignal, (input) => this.signalled('steer', () => steer(checkSteer(input))));
    setHandler(steerUpdate, steer, { validator: (input) => void checkSteer(input) });

    const checkAbort = (input: unknown) => {
      const run = this.current;
      if (!run) throw new Error('no run is in progress');
      return { run, reason: this.parse(AbortInputSchema, input ?? {}) };
    };
    const abort = (input: unknown) => {
      const { run, reason } = checkAbort(input);
      run.abort(reason);
      return { run: run.run };
    };
    setHandler(abortSignal, (input) => this.signalled('abort', () => abort(input)));
    setUpdateHandlerHeldOnReplay(
      abortUpdate,
      abort,
      (input) => void checkAbort(input),
      () => this.current !== undefined,
    );

    const checkApproval = (input: unknown): ApprovalDecision => {
      const decision = this.parse(ApprovalDecisionSchema, input);
      this.approvals.check(decision);
      return decision;
    };
    const approve = (input: unknown) => this.approvals.apply(checkApproval(input));
    setHandler(approveSignal, (input) => this.signalled('approve', () => approve(input)));
    // Decisions for the calls of one model answer are all asked at once, and the next answer comes
    // only after every one of them is settled: nothing pending, no decision in the history applies yet.
    setUpdateHandlerHeldOnReplay(
      approveUpdate,
      approve,
      (input) => void checkApproval(input),
      () => this.approvals.pendingCount > 0,
    );

    const checkMode = (input: unknown) => {
      if (this.ending) throw new Error('the conversation is ending');
      const change = this.parse(ApprovalModeInputSchema, input);
      return { change, signature: this.checkLoosening(change) };
    };
    setHandler(
      setApprovalModeUpdate,
      async (input) => {
        // Until the worker's admission, its approver keys are unknown and a loosening would pass
        // unchecked: a change sent at once after the start waits for them, then is checked.
        let checked: ReturnType<typeof checkMode> | undefined;
        if (patched('mode-change-after-admission')) {
          await condition(() => this.workerRulesKnown);
          try {
            checked = checkMode(input);
          } catch (error) {
            // Refused after waiting: the update fails with why (a plain throw here would fail the task).
            throw ApplicationFailure.nonRetryable((error as Error).message, 'ApprovalModeRefused');
          }
        }
        const { change, signature } = checked ?? checkMode(input);
        this.approvals.setMode(change.mode === 'default' ? undefined : change.mode);
        this.signatures.spend(signature);
        this.approvalModeChanged = true;
        return { mode: change.mode };
      },
      { validator: (input) => void checkMode(input) },
    );

    setHandler(
      compactUpdate,
      async () => {
        const ticket = this.compactionRequests.request();
        let receipt: CompactionReceipt | undefined;
        await condition(() => (receipt = this.compactionRequests.receiptAfter(ticket)) !== undefined);
        return receipt!;
      },
      {
        validator: () => {
          if (this.ending) throw new Error('the conversation is ending');
        },
      },
    );

    setHandler(statusQuery, () => this.summary());
    setHandler(stateQuery, () => ({
      ...this.summary(),
      transcript: this.transcript.all(),
      events: this.events.all(),
      approvals: { pending: this.approvals.pendingApprovals(), standing: this.approvals.standingDecisions() },
    }));
    setHandler(pendingApprovalsQuery, () => this.approvals.pendingApprovals());
    setHandler(eventsQuery, (afterSeq) => this.events.after(afterSeq));
    setHandler(transcriptPageQuery, (request) => this.transcript.page(request, TRANSCRIPT_PAGE_BYTES));

    setHandler(rapMessageSignal, (message) => {
      const parsed = RapConversationMessageSchema.safeParse(message);
      if (!parsed.success) {
        this.ignored('rapMessage', parsed.error.message);
        return;
      }
      if (this.status === 'ended') return;
      this.rap.receive(parsed.data, this.runCount);
    });
    setHandler(rapSubscriptionsQuery, () => this.rap.activeSubscriptions());
    setHandler(rapViewsQuery, () => this.rap.viewContents());
    setHandler(
      answerUserChoiceUpdate,
      async (answer) => {
        const { responseUrl, selected, undo } = this.rap.takeChoice(answer, this.runCount);
        try {
          await noticeActivities.sendRapNotice({
            kind: 'user_choice_response',
            responseUrl,
            toolCallId: answer.toolCallId,
            selected,
          });
        } catch (error) {
          const why = error instanceof ActivityFailure && error.cause ? error.cause.message : String(error);
          undo(why);
          throw ApplicationFailure.nonRetryable(`the choice could not be sent to the tool: ${why}`);
        }
        this.rap.choiceSent(answer, selected, this.runCount);
        return { selected };
      },
      {
        validator: (answer) => {
          const parsed = UserChoiceAnswerSchema.safeParse(answer);
          if (!parsed.success) throw new Error(`invalid answer: ${parsed.error.message}`);
          this.rap.checkChoice(parsed.data);
        },
      },
    );
  }

  /**
   * A mode that asks for less than the current one is a decision, under the rules approvals follow:
   * by one of the conversation's approvers when it names some, signed where the worker names keys.
   * Asking for as much or more needs no one's say. Throws why the change does not count.
   */
  private checkLoosening(change: ApprovalModeInput): CheckedSignature | undefined {
    const current = this.approvals.mode ?? 'default';
    if (MODE_STRICTNESS[change.mode] >= MODE_STRICTNESS[current]) return undefined;
    const approvers = this.approvals.approvers;
    if (!approvers && !this.signatures.required) return undefined;
    const by = change.by;
    if (by === undefined)
      throw new Error(
        `changing the approval mode from ${current} to ${change.mode} is a decision: name who makes it (by)`,
      );
    if (approvers && !approvers.includes(by))
      throw new Error(`${by} may not loosen the approval mode in this conversation`);
    return this.signatures.check({ ...change, by }, (expiresAt) =>
      signedApprovalModeText({ conversationId: this.conversationId, mode: change.mode, by, expiresAt }),
    );
  }

  private parse<T>(schema: z.ZodType<T>, value: unknown): T {
    const parsed = this.inputs.safeParse(schema, value);
    if (!parsed.success) throw new Error(schemaProblems(parsed.error));
    return parsed.data;
  }

  private signalled(what: string, handle: () => unknown): void {
    try {
      handle();
    } catch (error) {
      this.ignored(what, (error as Error).message);
    }
  }
}
