import { isCancellation, patched, sleep, workflowInfo } from '@temporalio/workflow';
import { approvalSubject } from './approval-scope';
import type { ApprovalSettings } from '../shared/approvals';
import type { ToolCall, ToolResultMessage } from '../shared/messages';
import { OWNER_ONLY_TOOL_ERROR } from './owners';
import type { ToolDescriptor } from '../shared/tool-descriptor';
import type { ToolCallScope, ToolRunInput } from '../shared/tool-run';
import { EVENT_ARGUMENTS_CHARS } from '../shared/constants';
import { LOCAL_TOOL_ATTEMPT_MS } from '../shared/liveness';
import {
  type ToolOutcome,
  abortedOutcome,
  blockedOutcome,
  errorOutcome,
  withOutcomeFields,
} from '../shared/tool-outcome';
import { localToolActivitiesFor, localToolAttempt, toolActivitiesFor } from './activity-proxies';
import { toolCallSummary } from '../shared/activity-summary';
import type { ApprovalBook } from './approval-book';
import { type RecordedToolResults, notRecordedMessage } from './recorded-tools';
import type { ConversationBudget } from './conversation-budget';
import type { EventLog } from './event-log';
import { outcomeOfToolFailure } from './tool-failure';
import { workflowTime } from './workflow-time';
import { workerBoundTaskQueue, workerTagOf } from '../shared/worker-bound';

/** A tool the conversation runs itself instead of a worker (a sub-agent, a subscription's cancel). */
export type WorkflowToolRunner = (
  call: ToolCall,
  args: Record<string, unknown>,
) => Promise<ToolOutcome> | ToolOutcome;

export interface FanOutContext {
  /** Where the calls happen; handed to each tool activity as it is. */
  scope: ToolCallScope;
  run: number;
  tools: ReadonlyMap<string, ToolDescriptor>;
  /** Tools that run in the workflow, by name; each still passes the owner and approval checks first. */
  workflowTools: ReadonlyMap<string, WorkflowToolRunner>;
  /** Names no call may use, with what the model reads instead. */
  reservedNames: ReadonlyMap<string, string>;
  /** Every message of the run came from an owner, so `ownerOnly` tools may run. */
  senderIsOwner: boolean;
  events: EventLog;
  approvals: ApprovalBook;
  approvalSettings: ApprovalSettings;
  /** A rerun's recorded results: a matching call is answered from them without running anything. */
  recorded?: RecordedToolResults;
  /** Counts the calls that run, and pauses the run before one that would pass its budget. */
  budget: Pick<ConversationBudget, 'beforeToolCall'>;
  /** Why a call was cancelled (steer or abort), for the model to read. */
  interruption: () => string;
  /** A call of a tool that answers by callback was interrupted: its server may stop the work. */
  asyncCallInterrupted: (call: ToolCall) => void;
}

const PREVIEW_CHARS = 200;

/** Runs recorded before local tools scheduled every tool as an activity, and replay the same. */
const LOCAL_TOOLS_PATCH = 'local-read-tools';
/** Runs recorded before a local tool's attempt was bounded ran its whole call locally, and replay the same. */
const LOCAL_ATTEMPT_PATCH = 'local-tool-attempt';

/**
 * Starts every call at once; results come back in the order the model asked for them. Calls that
 * need approval wait for it while the others run. Cancellation (steer, abort) never escapes: each
 * interrupted call becomes an aborted result, with whatever its tool returned before stopping.
 */
export function runToolCalls(calls: ToolCall[], context: FanOutContext): Promise<ToolResultMessage[]> {
  return Promise.all(calls.map((call) => runToolCall(call, context)));
}

/** Results for calls that were never started because the run was interrupted first. */
export function notStartedResults(calls: ToolCall[], reason: string): ToolResultMessage[] {
  return calls.map((call) => toolResultMessage(call, abortedOutcome(call.name, reason)));
}

async function runToolCall(call: ToolCall, context: FanOutContext): Promise<ToolResultMessage> {
  // Recorded once the call may run (after any approval), so watchers see approval, then execution.
  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    context.events.record(context.run, {
      type: 'tool_execution_start',
      toolCallId: call.id,
      toolName: call.name,
      args: call.arguments.slice(0, EVENT_ARGUMENTS_CHARS),
    });
  };
  let outcome: ToolOutcome;
  try {
    // A worker from before outcomes had fields (or its recorded result, replayed) gets them here.
    outcome = withOutcomeFields(await outcomeOf(call, context, start));
  } catch (error) {
    if (!isCancellation(error)) throw error;
    outcome = abortedOutcome(call.name, context.interruption());
  }
  start();
  const firstText = outcome.content.find((block) => block.type === 'text');
  context.events.record(context.run, {
    type: 'tool_execution_end',
    toolCallId: call.id,
    toolName: call.name,
    isError: outcome.isError,
    ...(outcome.aborted ? { aborted: true } : {}),
    status: outcome.status,
    ...(outcome.errorKind !== undefined ? { errorKind: outcome.errorKind } : {}),
    ...(outcome.blockedBy !== undefined ? { blockedBy: outcome.blockedBy } : {}),
    ...(outcome.retryAt !== undefined ? { retryAt: outcome.retryAt } : {}),
    preview: firstText?.type === 'text' ? firstText.text.slice(0, PREVIEW_CHARS) : '',
  });
  return toolResultMessage(call, outcome);
}

/** The transcript's message for a call: the outcome, its fields included, under the call's id. */
function toolResultMessage(call: ToolCall, outcome: ToolOutcome): ToolResultMessage {
  return {
    role: 'toolResult',
    toolCallId: call.id,
    toolName: call.name,
    ...outcome,
    timestamp: workflowTime(),
  };
}

/** Throws CancelledFailure when interrupted before the tool's activity was started. */
async function outcomeOf(call: ToolCall, context: FanOutContext, start: () => void): Promise<ToolOutcome> {
  const reserved = context.reservedNames.get(call.name);
  if (reserved !== undefined) return errorOutcome(call.name, 'PermissionDenied', reserved);
  const descriptor = context.tools.get(call.name);
  if (!descriptor) {
    const known = [...context.tools.values()]
      .filter((tool) => context.senderIsOwner || !tool.ownerOnly)
      .map((tool) => tool.name)
      .sort()
      .join(', ');
    return errorOutcome(call.name, 'NotFound', `Tool not found: ${call.name}. Available tools: ${known}`);
  }
  if (descriptor.ownerOnly && !context.senderIsOwner) {
    return errorOutcome(call.name, 'PermissionDenied', OWNER_ONLY_TOOL_ERROR);
  }
  const parsed = parseArguments(call.arguments);
  if (!parsed.ok) return errorOutcome(call.name, 'InvalidArgs', parsed.error);
  const risk = descriptor.risk;
  const subject = approvalSubject(call.name, parsed.value, context.tools, context.approvalSettings);
  const { scope } = subject;
  let { mode } = subject;
  const recorded = context.recorded?.answer(call);
  if (recorded && 'outcome' in recorded) {
    start();
    return recorded.outcome;
  }
  if (recorded?.tools === 'recorded') {
    return errorOutcome(call.name, 'NotFound', notRecordedMessage(call.name, context.run));
  }
  // `ask`: a call the original did not make runs only once a person allows it.
  if (recorded?.tools === 'ask') mode = 'always';
  const approval = await context.approvals.decide(
    {
      toolCallId: call.id,
      toolName: call.name,
      arguments: call.arguments,
      scope,
      risk,
      mode,
      run: context.run,
    },
    mode,
  );
  if (!approval.allowed) return blockedOutcome(call.name, approval.blockedBy, approval.reason);
  const verdict = context.budget.beforeToolCall(context.run);
  if (verdict !== 'go' && (await verdict) === 'stop') {
    return blockedOutcome(call.name, 'budget', 'not run: the run reached its budget and was stopped');
  }
  start();
  const inWorkflow = context.workflowTools.get(call.name);
  if (inWorkflow) return inWorkflow(call, parsed.value);
  // A call naming a background process goes to the worker that holds it.
  const boundId = descriptor.boundToWorkerBy ? parsed.value[descriptor.boundToWorkerBy] : undefined;
  const boundTag = workerTagOf(boundId);
  const workerQueue = boundTag ? workerBoundTaskQueue(workflowInfo().taskQueue, boundTag) : undefined;
  const input = { ...context.scope, toolCallId: call.id, toolName: call.name, arguments: parsed.value };
  const summary = toolCallSummary(call.name, parsed.value);
  try {
    if (descriptor.local && !workerQueue && patched(LOCAL_TOOLS_PATCH)) {
      const local = await localOutcomeOf(descriptor, input, summary);
      if (local) return local;
    }
    return await toolActivitiesFor(descriptor, workerQueue).runTool.executeWithOptions({ summary }, [input]);
  } catch (error) {
    if (isCancellation(error)) {
      if (descriptor.asyncCompletion) context.asyncCallInterrupted(call);
      return abortedOutcome(call.name, context.interruption());
    }
    return outcomeOfToolFailure(descriptor, error, boundTag ? (boundId as string) : undefined);
  }
}

/**
 * A local tool's call run by this worker inside the workflow task, bounded so that a steer waits
 * little behind it. Undefined when that attempt did not answer in time or failed: the call then runs
 * as an activity, with the tool's own timeouts and retries. A steer or abort throws.
 */
async function localOutcomeOf(
  descriptor: ToolDescriptor,
  input: ToolRunInput,
  summary: string,
): Promise<ToolOutcome | undefined> {
  if (!patched(LOCAL_ATTEMPT_PATCH)) {
    const { toolCallId: _id, ...outcome } = await localToolActivitiesFor(
      descriptor,
    ).runLocalTool.executeWithOptions({ summary }, [input]);
    return outcome;
  }
  try {
    const { toolCallId: _id, ...outcome } = await localToolAttempt.runLocalTool.executeWithOptions(
      { summary },
      [input],
    );
    return outcome;
  } catch (error) {
    if (isCancellation(error)) throw error;
    // Handed over from the next workflow task: a steer or abort that came while this one ran is seen
    // first (the timer throws), and the call is not started again only to be cancelled.
    await sleep(1, {
      summary: `${summary}: past its ${LOCAL_TOOL_ATTEMPT_MS} ms in the workflow task, runs as an activity`,
    });
    return undefined;
  }
}

type Parsed = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

/** The model's raw argument text, which may be malformed: that is the model's error to fix, not a crash. */
export function parseArguments(raw: string): Parsed {
  if (raw.trim() === '') return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    return {
      ok: false,
      error: `arguments are not valid JSON (${(error as Error).message}): ${raw.slice(0, 200)}`,
    };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, error: 'arguments must be a JSON object' };
  }
  return { ok: true, value: value as Record<string, unknown> };
}
