import { RetryState } from '@temporalio/common';
import { ActivityFailure, allHandlersFinished, condition, patched } from '@temporalio/workflow';
import { modelCallSummary } from '../shared/activity-summary';
import { EVENT_TEXT_PREVIEW_CHARS } from '../shared/constants';
import {
  type AssistantMessage,
  type ToolCall,
  type UserMessage,
  textOf,
  toolCallsOf,
} from '../shared/messages';
import type { ToolResultMessage } from '../shared/messages';
import type { ToolDescriptor } from '../shared/tool-descriptor';
import { type DailyBudgetSpent, isDailyBudgetSpent } from '../shared/daily-budget';
import type { TranscriptDelta } from '../shared/model-call';
import { DEFAULT_MODEL_RETRY_MS } from '../shared/liveness';
import { SPAWN_TOOL_NAME } from '../shared/sub-agents';
import { modelActivities, modelCallBound } from './activity-proxies';
import { compactIfNeeded } from './compaction';
import type { BudgetVerdict } from './conversation-budget';
import type { PausedRun, RunContext } from './run-context';
import { RunClientTools } from './run-client-tools';
import { RunInProgress } from './run-in-progress';
import { systemPromptOfRun } from './run-system-prompt';
import { type WorkflowToolRunner, notStartedResults, runToolCalls } from './tool-fan-out';
import { OfferedTools } from './worker-tools';
import { RESERVED_NAMES, workflowToolsFor } from './workflow-tools';

export type { PausedRun, RunContext } from './run-context';

/** Marks executions that may continue as new between the turns of a run, not only between runs. */
const CONTINUE_AS_NEW_BETWEEN_TURNS = 'continue-as-new-between-turns';

const STEERED = 'interrupted: the user steered the conversation before it finished';
const ABORTED = 'interrupted: the run was aborted';

/**
 * One run: the model is called, the tools it asks for run in parallel, their results go back to
 * the model, until it answers without tool calls or `maxToolIterations` model calls asked for tools.
 * A steering message interrupts the turn's tools and joins the transcript after their results; an
 * abort stops the run wherever it is. Every tool call the model made gets a result either way.
 * Returns the run when it is handed over to the next execution between two turns.
 */
export async function runTurnLoop(
  context: RunContext,
  messages: UserMessage[],
  resumed?: PausedRun,
): Promise<PausedRun | undefined> {
  const { control, options } = context;
  const run = new RunInProgress(context, messages, resumed);
  const offered = await offeredTools(context, run, resumed !== undefined);
  if (!offered) return undefined;
  const systemPrompt = await systemPromptOfRun(context, run, offered, resumed);
  if (systemPrompt === 'failed') return undefined;
  run.systemPrompt = systemPrompt.prompt;
  const workflowTools = workflowToolsFor(context, run, offered);
  const tools = runTools(context, run, offered, workflowTools, resumed !== undefined);

  // The outer loop: a turn is one model call and the tools it asks for.
  for (let turn = run.firstTurn; ; turn++) {
    joinSubscriptionEvents(context);
    if (!(await compact(context, run))) return undefined;
    if (turn > run.firstTurn && context.historyIsLong() && patched(CONTINUE_AS_NEW_BETWEEN_TURNS)) {
      const handOver = await readyToHandOver(context, run);
      if (handOver === 'failed') return undefined;
      if (handOver === 'now') return run.pausedAt(turn);
    }
    const verdict = context.budget.beforeModelCall(run.run);
    if (verdict !== 'go' && !(await goesOnAfterBudget(run, verdict))) return undefined;
    const reply = await callModel(context, run, tools, turn);
    if (!reply) return undefined;
    const calls = toolCallsOf(reply);
    if (calls.length === 0) {
      if (!control.hasSteering) return void run.answered(reply);
      run.applySteering([]);
      continue;
    }

    // The inner step: the turn's tool calls, all at once, their results in the order asked.
    const results = await runToolCallsOfTurn(context, run, tools, calls);
    const interrupted = results.filter((result) => result.aborted).map((result) => result.toolCallId);
    if (control.aborted) return void run.abort(interrupted);
    if (context.budget.stoppedRun(run.run)) return void run.finish('budget_exhausted');
    if (control.hasSteering) {
      // A person just spoke: the model answers them even when the tool iteration limit is reached.
      run.applySteering(interrupted);
      continue;
    }
    if (turn >= options.maxToolIterations) {
      context.events.record(run.run, {
        type: 'error',
        message: `max tool iterations (${options.maxToolIterations}) exceeded`,
      });
      return void run.finish('max_tool_iterations');
    }
  }
}

/** The worker's tools the conversation's policy keeps; undefined (the run ended) when they cannot be listed. */
async function offeredTools(
  context: RunContext,
  run: RunInProgress,
  resumed: boolean,
): Promise<OfferedTools | undefined> {
  try {
    const offered = new OfferedTools(await context.tools(), context.options);
    // What the policy steps got wrong is said once per run.
    if (!resumed)
      for (const message of offered.warnings) context.events.record(run.run, { type: 'warning', message });
    return offered;
  } catch (error) {
    run.fail("could not list the worker's tools", error);
    return undefined;
  }
}

/** Everything a run's model calls are offered and its fan-out runs: the worker's tools and the run's client tools. */
interface RunTools {
  offered: OfferedTools;
  client: RunClientTools;
  /** The descriptors of both, by name. */
  descriptors: ReadonlyMap<string, ToolDescriptor>;
  /** Tools that run in the workflow, client tools among them, by name. */
  inWorkflow: ReadonlyMap<string, WorkflowToolRunner>;
}

/**
 * The worker's tools and the run's client tools together. Client tools are runners in the workflow;
 * a name the worker or the runtime has stays theirs (said once per run, not again on a resumed one).
 */
function runTools(
  context: RunContext,
  run: RunInProgress,
  offered: OfferedTools,
  workflowTools: ReadonlyMap<string, WorkflowToolRunner>,
  resumed: boolean,
): RunTools {
  const client = new RunClientTools(
    run.clientTools,
    (name) => offered.descriptors.has(name) || workflowTools.has(name) || RESERVED_NAMES.has(name),
  );
  if (!resumed)
    for (const message of client.warnings) context.events.record(run.run, { type: 'warning', message });
  return {
    offered,
    client,
    descriptors: client.tools.length
      ? new Map([...offered.descriptors, ...client.descriptors])
      : offered.descriptors,
    inWorkflow: client.tools.length
      ? new Map([...workflowTools, ...client.runners(context.clientCalls, run.run)])
      : workflowTools,
  };
}

/** Subscription events that came in (before the run or during its last turn) join before the model call. */
function joinSubscriptionEvents(context: RunContext): void {
  if (context.rap.hasEvents)
    context.transcript.append(...context.rap.takeEventMessages(context.options.model ?? 'runtime'));
}

/** Summarises the oldest turns when the transcript is over its budget, or when asked to; false when that failed (the run ended). */
async function compact(context: RunContext, run: RunInProgress): Promise<boolean> {
  try {
    const forced = context.compactionRequests.take();
    const receipt = await compactIfNeeded(
      {
        conversationId: context.conversationId,
        run: run.run,
        transcript: context.transcript,
        events: context.events,
        settings: context.options.compaction,
        model: context.options.model,
        ...(context.options.modelApi !== undefined ? { modelApi: context.options.modelApi } : {}),
        ...context.budget.compactionCounting(),
      },
      forced,
    );
    context.compactionRequests.report(receipt, forced);
    return true;
  } catch (error) {
    run.fail('compaction', error);
    return false;
  }
}

/**
 * Between turns of a long run: hand over to a fresh history once every handler is done, unless a
 * steer or abort came meanwhile (answered here first; the hand-over waits for the next turn).
 */
async function readyToHandOver(context: RunContext, run: RunInProgress): Promise<'now' | 'later' | 'failed'> {
  try {
    await condition(allHandlersFinished);
  } catch (error) {
    run.fail('continue-as-new', error);
    return 'failed';
  }
  return context.control.hasSteering || context.control.aborted ? 'later' : 'now';
}

/**
 * A run that reached its budget before a model call goes on once a person raised it; when they
 * stopped it (or aborted meanwhile) it ends here, and false says so.
 */
async function goesOnAfterBudget(
  run: RunInProgress,
  verdict: 'stop' | Promise<BudgetVerdict>,
): Promise<boolean> {
  try {
    if ((await verdict) === 'go') return true;
  } catch (error) {
    run.fail('budget', error);
    return false;
  }
  run.finish('budget_exhausted');
  return false;
}

/**
 * The model's reply to what is new in the transcript, appended to it; undefined when the call failed
 * or the run stopped (the run ended). A call the agent's spent day held back waits for the next UTC
 * day (or a reject), then asks again.
 */
async function callModel(
  context: RunContext,
  run: RunInProgress,
  tools: RunTools,
  turn: number,
): Promise<AssistantMessage | undefined> {
  const { transcript, events, budget } = context;
  for (;;) {
    const delta = transcript.deltaForModel(context.conversationId);
    const answer = await askModel(context, run, tools, turn, delta);
    if (!answer) return undefined;
    if (isDailyBudgetSpent(answer)) {
      if (!(await goesOnAfterBudget(run, budget.dailyBudgetSpent(run.run, answer.dailyBudgetSpent))))
        return undefined;
      continue;
    }
    transcript.markSent(delta);
    transcript.append(answer);
    budget.modelReplied(answer.usage);
    events.record(run.run, {
      type: 'model_response',
      iteration: turn,
      text: textOf(answer).slice(0, EVENT_TEXT_PREVIEW_CHARS),
      toolCalls: toolCallsOf(answer).map((call) => ({ id: call.id, name: call.name })),
    });
    return answer;
  }
}

/** One model activity: the reply, or that the agent's day is spent; undefined when it failed (the run ended). */
async function askModel(
  context: RunContext,
  run: RunInProgress,
  tools: RunTools,
  turn: number,
  delta: TranscriptDelta,
): Promise<AssistantMessage | DailyBudgetSpent | undefined> {
  const { options, budget } = context;
  const retryMs = options.modelRetryMs ?? DEFAULT_MODEL_RETRY_MS;
  try {
    return await modelActivities.callModel.executeWithOptions(
      {
        summary: modelCallSummary(options.model, run.run, turn),
        ...modelCallBound(retryMs),
      },
      [
        {
          transcript: delta,
          toolNames: tools.offered.toModel(run.ownersRun),
          ...(tools.client.tools.length ? { clientTools: tools.client.tools } : {}),
          model: options.model,
          systemPrompt: run.systemPrompt,
          ...(options.modelApi !== undefined ? { api: options.modelApi } : {}),
          ...(budget.dailyBudgetAgent !== undefined ? { agentId: budget.dailyBudgetAgent } : {}),
        },
      ],
    );
  } catch (error) {
    run.fail(modelFailureWhat(error, retryMs), error);
    return undefined;
  }
}

/** `model call failed`, saying how long it was tried when its time ran out (rather than being refused). */
function modelFailureWhat(error: unknown, retryMs: number): string {
  if (!(error instanceof ActivityFailure) || error.retryState !== RetryState.TIMEOUT)
    return 'model call failed';
  const tried = retryMs % 60_000 === 0 ? `${retryMs / 60_000} min` : `${Math.round(retryMs / 1_000)} s`;
  return `model call failed, tried again for ${tried} (the conversation's modelRetryMs)`;
}

/**
 * The turn's tool calls, in a scope a steer cancels; a steer that came during the model call
 * applies now, and the calls it asked for are answered without running. Results join the transcript.
 */
async function runToolCallsOfTurn(
  context: RunContext,
  run: RunInProgress,
  tools: RunTools,
  calls: ToolCall[],
): Promise<ToolResultMessage[]> {
  const { control, options } = context;
  context.rap.callsStarted(calls);
  context.budget.subAgentsAsked(calls.filter((call) => call.name === SPAWN_TOOL_NAME).length);
  const results = control.hasSteering
    ? notStartedResults(calls, STEERED)
    : await control.runTools(() =>
        runToolCalls(calls, {
          scope: run.toolCallScope(),
          run: run.run,
          tools: tools.descriptors,
          workflowTools: tools.inWorkflow,
          reservedNames: RESERVED_NAMES,
          senderIsOwner: run.ownersRun,
          events: context.events,
          approvals: context.approvals,
          approvalSettings: options.approval,
          ...(run.recordedTools ? { recorded: run.recordedTools } : {}),
          budget: context.budget,
          interruption: () => (control.aborted ? ABORTED : STEERED),
          asyncCallInterrupted: (call) =>
            context.notify({
              kind: 'cancel_tool_call',
              conversationId: context.conversationId,
              toolCallId: call.id,
            }),
        }),
      );
  context.rap.callsFinished(calls, results, run.run);
  context.transcript.append(...results);
  return results;
}
