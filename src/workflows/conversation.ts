import type { BudgetUsage } from '../shared/budget';
import type { RunFinishedOutcome } from '../shared/events';
import {
  ApplicationFailure,
  allHandlersFinished,
  condition,
  makeContinueAsNewFunc,
  isCancellation,
  patched,
  workflowInfo,
} from '@temporalio/workflow';
import { UserMessageInputSchema } from '../shared/conversation-api';
import { ConversationOptionsSchema } from '../shared/conversation-options';
import { admissionActivities, noticeActivities } from './activity-proxies';
import { compactIfNeeded } from './compaction';
import type { ConversationInput } from './conversation-carry';
import { ConversationEntity, userMessageOf } from './conversation-entity';
import type { PausedRun } from './run-context';
import { runTurnLoop } from './turn-loop';
import { ConversationVisibility } from './conversation-visibility';
import { ConversationMetrics } from './conversation-metrics';
import { DEFAULT_AGENT_ID } from '../shared/agent-id';
import { lineageProblem } from '../shared/sub-agents';
import { schemaProblems } from '../shared/schema-problems';
import { DEFAULT_MAX_HISTORY_EVENTS, WORKFLOW_TASK_TIMEOUT_MS } from '../shared/workflow-task-bounds';
import { InputParsing, knownKeysOnly } from './input-parsing';
import { runHistoryIsLong } from './history-bound';

export type { CarriedConversation, ConversationInput } from './conversation-carry';

export interface ConversationResult {
  runs: number;
  messages: number;
  endedBy: 'end' | 'idle_timeout' | 'first_run';
  /** How the last run ended and its answer: what a sub-agent's parent reads. */
  outcome?: RunFinishedOutcome;
  answer?: string;
  /** Tokens and tool calls the conversation spent, its sub-agents' included: what a parent counts in its budget. */
  usage?: BudgetUsage;
}

/**
 * One conversation, for as long as it lasts: idle between runs, a run per user message (messages
 * that arrive during a run queue and are taken together by the next run), ended by `end` or
 * after `idleTimeoutMs` without a message. Its state and handlers are the ConversationEntity;
 * this is the loop that waits, runs and hands over.
 *
 * On versioned workers each execution is pinned to the build it started on, and hands over to the
 * deployment's current build between two runs once Temporal says that build has changed: a run
 * (and a pending approval in it) finishes on the code that began it, and the next starts on the
 * new code with a fresh history.
 */
export async function conversation(input: ConversationInput = {}): Promise<ConversationResult> {
  const inputs = new InputParsing(patched('strict-inputs'));
  const parsedOptions = inputs.safeParse(ConversationOptionsSchema, input.options ?? {});
  if (!parsedOptions.success) {
    throw ApplicationFailure.nonRetryable(
      `invalid conversation options: ${schemaProblems(parsedOptions.error)}`,
    );
  }
  const options = parsedOptions.data;
  // Before anything else: a place in a tree of sub-agents is Temporal's to say, not the client's.
  const info = workflowInfo();
  const lineage = lineageProblem(
    info.workflowId,
    options.ancestors,
    info.parent?.workflowId,
    info.root?.workflowId,
  );
  if (lineage) throw ApplicationFailure.nonRetryable(`refused: ${lineage}`, 'ConversationRefused');
  const initialMessage =
    input.initialMessage && inputs.safeParse(UserMessageInputSchema, input.initialMessage);
  if (initialMessage && !initialMessage.success) {
    throw ApplicationFailure.nonRetryable(`invalid initial message: ${schemaProblems(initialMessage.error)}`);
  }
  const { carried } = input;
  const self = new ConversationEntity(options, carried, inputs);
  const { conversationId, transcript, events, queue, approvals, compactionRequests, rap, budget } = self;
  // Before any signal: a scheduled conversation's prompt comes first. Never carried by continue-as-new.
  if (initialMessage) queue.push(userMessageOf(initialMessage.data));
  self.installHandlers();

  // Runs from before the default bound keep to what their options said, so their histories replay.
  const maxHistoryEvents =
    options.maxHistoryEvents ?? (patched('bounded-history') ? DEFAULT_MAX_HISTORY_EVENTS : undefined);
  const historyIsLong = () => runHistoryIsLong(maxHistoryEvents);
  // Never true on an unversioned worker, so histories recorded before versioning replay unchanged.
  const newBuildIsCurrent = () => workflowInfo().targetWorkerDeploymentVersionChanged;
  const shouldHandOver = () => historyIsLong() || newBuildIsCurrent();
  const hasWork = () =>
    queue.length > 0 || rap.hasEvents || self.endRequested || shouldHandOver() || compactionRequests.pending;
  /** False when the idle timeout passed with nothing to do. */
  const waitForWork = async (): Promise<boolean> => {
    if (options.idleTimeoutMs === undefined) {
      await condition(hasWork);
      return true;
    }
    return condition(hasWork, options.idleTimeoutMs);
  };
  /** Hands the conversation (and the run paused between two turns, if any) to a fresh history. */
  const handOver = async (paused?: PausedRun) => {
    await self.outbox?.drain();
    // A mode changed by `setApprovalMode` goes on in the next execution; otherwise the options are
    // handed on as given, less keys a run from before strict inputs did not know (the next refuses them).
    const given = (
      inputs.strict ? input.options : knownKeysOnly(ConversationOptionsSchema, input.options)
    ) as ConversationInput['options'];
    const handedOptions = self.approvalModeChanged
      ? { ...given, approval: { ...given?.approval, mode: self.approvals.mode } }
      : given;
    // The next execution starts on the deployment's current build, not pinned to this one; what it
    // is handed (the carried state) is the contract between builds.
    return makeContinueAsNewFunc<typeof conversation>({
      initialVersioningBehavior: 'AUTO_UPGRADE',
      // Also for a conversation a client started with Temporal's default.
      workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT_MS,
    })({
      options: handedOptions,
      carried: self.carry(paused),
    });
  };

  // Before anything runs, the worker holds the options to its operator's floors. Histories from
  // before admission existed replay without it.
  let searchAttributes = false;
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
      agentId: options.agentId ?? DEFAULT_AGENT_ID,
    });
    if (!admission.admitted) throw ApplicationFailure.nonRetryable(admission.reason, 'ConversationRefused');
    self.admitted(admission);
    searchAttributes = admission.searchAttributes === true;
  }

  const visibility = new ConversationVisibility(
    searchAttributes ? { agentId: options.agentId ?? DEFAULT_AGENT_ID } : undefined,
  );
  visibility.start(carried?.paused?.run);
  events.onRecord((event) => visibility.eventRecorded(event));
  const metrics = new ConversationMetrics();
  events.onRecord((event) => metrics.eventRecorded(event));

  let endedBy: ConversationResult['endedBy'] = 'end';
  let lastRun: Pick<ConversationResult, 'outcome' | 'answer'> = {};
  /** The run the previous execution paused between two turns: it goes on before anything else. */
  let resumed = carried?.paused;
  for (;;) {
    if (!resumed && !(await waitForWork())) {
      endedBy = 'idle_timeout';
      break;
    }
    if (!resumed && !self.endRequested && shouldHandOver()) {
      // Between runs: nothing is in flight but handlers, and signals that arrive meanwhile land in `queue`.
      await condition(allHandlersFinished);
      return handOver();
    }
    if (!resumed && queue.length === 0 && !rap.hasEvents && compactionRequests.take()) {
      // Asked for while idle: compact now, outside any run.
      const receipt = await compactIfNeeded(
        {
          conversationId,
          run: self.runCount,
          transcript,
          events,
          settings: options.compaction,
          model: options.model,
          ...budget.compactionCounting(),
        },
        true,
      );
      compactionRequests.report(receipt, true);
      continue;
    }
    if (!resumed && queue.length === 0 && !rap.hasEvents) break;
    const control = self.beginRun(resumed !== undefined);
    const run = control.run;
    // A resumed run takes no new messages: they wait for the next run, as they would have.
    const messages = resumed ? [] : queue.splice(0);
    const seqBefore = events.lastSeq;
    let paused: PausedRun | undefined;
    try {
      paused = await control.scope.run(() =>
        runTurnLoop(
          {
            conversationId,
            run,
            options,
            transcript,
            events,
            tools: () => self.workerTools(run),
            approvals,
            control,
            compactionRequests,
            budget,
            rap,
            notify: self.notify,
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
      self.runLeft();
      resumed = undefined;
    }
    if (paused) return handOver(paused);
    self.runEnded(control);
    for (const event of events.after(seqBefore)) {
      if (event.type === 'run_finished') lastRun = { outcome: event.outcome, answer: event.answer };
    }
    if (options.endAfterFirstRun) {
      endedBy = 'first_run';
      break;
    }
  }
  self.end();
  const tools = self.tools;
  if (tools && [...tools.values()].some((tool) => tool.asyncCompletion)) {
    // The tool servers may let go of what they kept for this conversation.
    await noticeActivities.sendRapNotice({ kind: 'close_thread', conversationId }).catch(() => undefined);
  }
  self.outbox?.ended({ endedBy, runs: self.runCount, ...lastRun });
  await self.outbox?.drain();
  await condition(allHandlersFinished);
  return {
    runs: self.runCount,
    messages: transcript.length,
    endedBy,
    ...lastRun,
    usage: budget.status().used,
  };
}
