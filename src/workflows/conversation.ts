import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  continueAsNew,
  isCancellation,
  patched,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { DEFAULT_AGENT_ID } from '../shared/agent-id';
import { MAX_EVENTS_KEPT, TRANSCRIPT_PAGE_BYTES } from '../shared/constants';
import {
  type ConversationStartInput,
  type ConversationStatus,
  type ConversationStatusSummary,
  UserMessageInputSchema,
  compactUpdate,
  endSignal,
  eventsQuery,
  pendingApprovalsQuery,
  stateQuery,
  statusQuery,
  transcriptPageQuery,
  userMessageSignal,
} from '../shared/conversation-api';
import { ConversationOptionsSchema } from '../shared/conversation-options';
import type { CompactionReceipt } from '../shared/compaction';
import type { UserMessage } from '../shared/messages';
import {
  type RapNotice,
  RapConversationMessageSchema,
  UserChoiceAnswerSchema,
  answerUserChoiceUpdate,
  rapMessageSignal,
  rapSubscriptionsQuery,
  rapViewsQuery,
} from '../shared/rap';
import type { ToolDescriptor } from '../shared/tool-descriptor';
import { ApprovalBook, type StandingDecisions, type UsedSignatures } from './approval-book';
import { CompactionRequests, compactIfNeeded } from './compaction';
import { admissionActivities, noticeActivities } from './activity-proxies';
import { installControlHandlers, userMessageOf } from './control-handlers';
import { type CarriedEvents, EventLog } from './event-log';
import { type CarriedRapThread, RapThread } from './rap-thread';
import { RunControl } from './run-control';
import { type CarriedTranscript, Transcript } from './transcript';
import { WebhookOutbox } from './webhook-outbox';
import { type PausedRun, lookUpTools, runTurnLoop } from './turn-loop';

export interface ConversationInput extends ConversationStartInput {
  /** Handed over by the previous run of this conversation when it continued as new. */
  carried?: CarriedConversation;
}

/** Everything a conversation needs to go on in a fresh history. */
export interface CarriedConversation {
  transcript: CarriedTranscript;
  events: CarriedEvents;
  standingApprovals: StandingDecisions;
  /** Messages that arrived while idle or during the hand-over, not yet taken by a run. */
  queue: UserMessage[];
  runCount: number;
  endRequested: boolean;
  /** How many times the conversation has continued as new before this run. */
  continuations: number;
  /** RAP subscriptions, their waiting events and views; absent in runs from before RAP. */
  rap?: CarriedRapThread;
  /** A run that was paused between two turns to continue as new; it resumes first. */
  paused?: PausedRun;
  /** Signed decisions taken and not yet expired, so none counts twice; absent before signed decisions. */
  usedSignatures?: UsedSignatures;
}

/** Events handed to the next run, so watchers and the `state` query still see recent history. */
const EVENTS_CARRIED = 100;

export interface ConversationResult {
  runs: number;
  messages: number;
  endedBy: 'end' | 'idle_timeout' | 'first_run';
  /** How the last run ended and its answer: what a sub-agent's parent reads. */
  outcome?: 'answered' | 'max_tool_iterations' | 'error' | 'aborted';
  answer?: string;
}

/**
 * One conversation, for as long as it lasts: idle between runs, a run per user message (messages
 * that arrive during a run queue and are taken together by the next run), ended by `end` or
 * after `idleTimeoutMs` without a message.
 */
export async function conversation(input: ConversationInput = {}): Promise<ConversationResult> {
  const parsedOptions = ConversationOptionsSchema.safeParse(input.options ?? {});
  if (!parsedOptions.success) {
    throw ApplicationFailure.nonRetryable(`invalid conversation options: ${parsedOptions.error.message}`);
  }
  const options = parsedOptions.data;
  const initialMessage = input.initialMessage && UserMessageInputSchema.safeParse(input.initialMessage);
  if (initialMessage && !initialMessage.success) {
    throw ApplicationFailure.nonRetryable(`invalid initial message: ${initialMessage.error.message}`);
  }
  const conversationId = workflowInfo().workflowId;
  const { carried } = input;
  const transcript = new Transcript(carried?.transcript);
  const events = new EventLog(MAX_EVENTS_KEPT, carried?.events);
  const queue: UserMessage[] = [...(carried?.queue ?? [])];
  // Before any signal: a scheduled conversation's prompt comes first. Never carried by continue-as-new.
  if (initialMessage) queue.push(userMessageOf(initialMessage.data));
  let status: ConversationStatus = 'idle';
  let runCount = carried?.runCount ?? 0;
  let endRequested = carried?.endRequested ?? false;
  let tools: ReadonlyMap<string, ToolDescriptor> | undefined;
  const approvals = new ApprovalBook(
    conversationId,
    options.approval,
    events,
    carried?.standingApprovals,
    carried?.usedSignatures,
  );
  /** The run in progress, if any. */
  let current: RunControl | undefined;
  const compactionRequests = new CompactionRequests();
  const rap = new RapThread(events, carried?.rap);
  const notify = (notice: RapNotice): void => {
    // Not waited for, and sent even from a cancelled run (the notice is about its cancelled call).
    CancellationScope.nonCancellable(() => noticeActivities.sendRapNotice(notice)).catch(() => undefined);
  };

  const ignored = (what: string, reason: string): void => {
    events.record(runCount, { type: 'error', message: `${what} ignored: ${reason}` });
  };

  setHandler(userMessageSignal, (message) => {
    const parsed = UserMessageInputSchema.safeParse(message);
    if (!parsed.success) {
      ignored('userMessage', parsed.error.message);
      return;
    }
    queue.push(userMessageOf(parsed.data));
  });
  setHandler(endSignal, () => {
    endRequested = true;
  });
  installControlHandlers({
    approvals,
    currentRun: () => current,
    enqueue: (message) => queue.push(message),
    ending: () => status === 'ended' || endRequested,
    ignored,
  });

  setHandler(
    compactUpdate,
    async () => {
      const ticket = compactionRequests.request();
      let receipt: CompactionReceipt | undefined;
      await condition(() => (receipt = compactionRequests.receiptAfter(ticket)) !== undefined);
      return receipt!;
    },
    {
      validator: () => {
        if (status === 'ended' || endRequested) throw new Error('the conversation is ending');
      },
    },
  );

  const summary = (): ConversationStatusSummary => ({
    status,
    runCount,
    queuedMessages: queue.length,
    transcriptLength: transcript.length,
    lastSeq: events.lastSeq,
    pendingApprovals: approvals.pendingCount,
    transcriptGeneration: transcript.currentGeneration,
    agentId: options.agentId ?? DEFAULT_AGENT_ID,
  });
  setHandler(statusQuery, summary);
  setHandler(stateQuery, () => ({
    ...summary(),
    transcript: transcript.all(),
    events: events.all(),
    approvals: { pending: approvals.pendingApprovals(), standing: approvals.standingDecisions() },
  }));
  setHandler(pendingApprovalsQuery, () => approvals.pendingApprovals());
  setHandler(rapMessageSignal, (message) => {
    const parsed = RapConversationMessageSchema.safeParse(message);
    if (!parsed.success) {
      ignored('rapMessage', parsed.error.message);
      return;
    }
    if (status === 'ended') return;
    rap.receive(parsed.data, runCount);
  });
  setHandler(rapSubscriptionsQuery, () => rap.activeSubscriptions());
  setHandler(rapViewsQuery, () => rap.viewContents());
  setHandler(
    answerUserChoiceUpdate,
    async (answer) => {
      const { responseUrl, selected, undo } = rap.takeChoice(answer, runCount);
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
      rap.choiceSent(answer, selected, runCount);
      return { selected };
    },
    {
      validator: (answer) => {
        const parsed = UserChoiceAnswerSchema.safeParse(answer);
        if (!parsed.success) throw new Error(`invalid answer: ${parsed.error.message}`);
        rap.checkChoice(parsed.data);
      },
    },
  );
  setHandler(eventsQuery, (afterSeq) => events.after(afterSeq));
  setHandler(transcriptPageQuery, (request) => transcript.page(request, TRANSCRIPT_PAGE_BYTES));

  const historyIsLong = () => {
    const info = workflowInfo();
    return (
      info.continueAsNewSuggested ||
      (options.maxHistoryEvents !== undefined && info.historyLength >= options.maxHistoryEvents)
    );
  };
  const hasWork = () =>
    queue.length > 0 || rap.hasEvents || endRequested || historyIsLong() || compactionRequests.pending;
  /** False when the idle timeout passed with nothing to do. */
  const waitForWork = async (): Promise<boolean> => {
    if (options.idleTimeoutMs === undefined) {
      await condition(hasWork);
      return true;
    }
    return condition(hasWork, options.idleTimeoutMs);
  };

  let endedBy: ConversationResult['endedBy'] = 'end';
  let lastRun: Pick<ConversationResult, 'outcome' | 'answer'> = {};
  /** Hands the conversation (and the run paused between two turns, if any) to a fresh history. */
  const handOver = (paused?: PausedRun) =>
    continueAsNew<typeof conversation>({
      options: input.options,
      carried: {
        transcript: transcript.carry(),
        events: events.carry(EVENTS_CARRIED),
        standingApprovals: approvals.standingDecisions(),
        queue: queue.splice(0),
        runCount,
        endRequested,
        continuations: (carried?.continuations ?? 0) + 1,
        rap: rap.carry(),
        ...(paused ? { paused } : {}),
        usedSignatures: approvals.usedSignatureRecord(),
      },
    });
  let outbox: WebhookOutbox | undefined;
  // Before anything runs, the worker holds the options to its operator's floors. Histories from
  // before admission existed replay without it.
  if (patched('worker-admission')) {
    const admission = await admissionActivities.admitConversation({
      ...(options.workspace !== undefined ? { workspace: options.workspace } : {}),
      ...(options.execSecurity !== undefined ? { execSecurity: options.execSecurity } : {}),
      approval: {
        ...(options.approval.mode !== undefined ? { mode: options.approval.mode } : {}),
        ...(options.approval.tools !== undefined ? { tools: options.approval.tools } : {}),
      },
      carried: Object.entries(carried ?? {}).flatMap(([part, value]) => (value === undefined ? [] : [part])),
      continued: workflowInfo().continuedFromExecutionRunId !== undefined,
    });
    if (!admission.admitted) throw ApplicationFailure.nonRetryable(admission.reason, 'ConversationRefused');
    approvals.enforce(admission);
    if (admission.webhooks) {
      outbox = new WebhookOutbox(conversationId, admission.webhooks, (toolCallId) =>
        approvals.pendingApprovals().find((pending) => pending.toolCallId === toolCallId),
      );
      events.onRecord((event) => outbox?.eventRecorded(event));
    }
  }

  /** The run the previous execution paused between two turns: it goes on before anything else. */
  let resumed = carried?.paused;
  for (;;) {
    if (!resumed && !(await waitForWork())) {
      endedBy = 'idle_timeout';
      break;
    }
    if (!resumed && !endRequested && historyIsLong()) {
      // Between runs: nothing is in flight but handlers, and signals that arrive meanwhile land in `queue`.
      await condition(allHandlersFinished);
      await outbox?.drain();
      return handOver();
    }
    if (!resumed && queue.length === 0 && !rap.hasEvents && compactionRequests.take()) {
      // Asked for while idle: compact now, outside any run.
      const receipt = await compactIfNeeded(
        {
          conversationId,
          run: runCount,
          transcript,
          events,
          settings: options.compaction,
          model: options.model,
        },
        true,
      );
      compactionRequests.report(receipt, true);
      continue;
    }
    if (!resumed && queue.length === 0 && !rap.hasEvents) break;
    status = 'running';
    if (!resumed) runCount++;
    const control = new RunControl(runCount);
    current = control;
    // A resumed run takes no new messages: they wait for the next run, as they would have.
    const messages = resumed ? [] : queue.splice(0);
    const seqBefore = events.lastSeq;
    let paused: PausedRun | undefined;
    try {
      paused = await control.scope.run(() =>
        runTurnLoop(
          {
            conversationId,
            run: runCount,
            options,
            transcript,
            events,
            tools: async () => {
              if (tools) return tools;
              const listing = await lookUpTools();
              // Said once per execution: the listing is kept until the conversation continues as new.
              for (const message of listing.warnings) events.record(runCount, { type: 'warning', message });
              return (tools = listing.tools);
            },
            approvals,
            control,
            compactionRequests,
            rap,
            notify,
            historyIsLong,
          },
          messages,
          resumed,
        ),
      );
    } catch (error) {
      // The loop turns an abort into an `aborted` event; a cancellation reaching here is the workflow's own.
      if (!isCancellation(error) || !control.aborted) throw error;
    } finally {
      current = undefined;
      resumed = undefined;
    }
    if (paused) {
      await outbox?.drain();
      return handOver(paused);
    }
    // Steering that an abort overtook is not lost: it starts the next run.
    queue.unshift(...control.takeSteering());
    status = 'idle';
    for (const event of events.after(seqBefore)) {
      if (event.type === 'run_finished') lastRun = { outcome: event.outcome, answer: event.answer };
    }
    if (options.endAfterFirstRun) {
      endedBy = 'first_run';
      break;
    }
  }
  status = 'ended';
  if (tools && [...tools.values()].some((tool) => tool.asyncCompletion)) {
    // rap spec, "Thread Closure": the tool servers may let go of what they kept for this conversation.
    await noticeActivities.sendRapNotice({ kind: 'close_thread', conversationId }).catch(() => undefined);
  }
  outbox?.ended({ endedBy, runs: runCount, ...lastRun });
  await outbox?.drain();
  await condition(allHandlersFinished);
  return { runs: runCount, messages: transcript.length, endedBy, ...lastRun };
}
