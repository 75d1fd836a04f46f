import type { PayloadConverter } from '@temporalio/common';
import type { Message } from '../shared/messages';
import { type ExecutionHistory, buildTimeline } from './build-timeline';
import type { ModelCallItem, TimelineItem } from './timeline';
import { type RecordedModelCall, TranscriptAtRunError, recordedModelCalls } from './transcript-at-run';

/** One model call of a run: what the model was given and what it answered. */
export interface ModelCallAtRun {
  /** Model calls so far in the run, this one included. */
  iteration: number;
  /** Index (from 1) of the execution holding it, and its ActivityTaskScheduled event there. */
  execution: number;
  eventId: number;
  outcome: ModelCallItem['outcome'];
  model?: string;
  systemPrompt?: string;
  /** The tools offered, by name. */
  toolNames: string[];
  /** The transcript as sent (after any compaction), without the system prompt the worker puts first. */
  messages: Message[];
  /** The model's message, when the call completed. */
  answer?: Message;
  usage?: { inputTokens: number; outputTokens: number };
}

/** A decision asked for in the run: decided (by whom), or still pending when the run's history ends. */
export interface ApprovalAtRun {
  toolCallId: string;
  toolName?: string;
  decision: string;
  by?: string;
}

/** What a conversation's run looked like from inside: what each model call was given, with what in force. */
export interface StateAtRun {
  conversationId: string;
  run: number;
  /** Runs the histories show in all. */
  runs: number;
  /** The Temporal run id of the execution where the run began. */
  runId: string;
  /** The options that execution was started with (continue-as-new hands them on). */
  options: unknown;
  /** The approval mode set by `setApprovalMode` before the run, when one was. */
  approvalMode?: string;
  modelCalls: ModelCallAtRun[];
  approvals: ApprovalAtRun[];
}

/**
 * The state of run `atRun` (numbered as `history` numbers runs) from a conversation's executions,
 * oldest first, payloads decoded: every model call with the transcript it was sent and the tools it
 * was offered, the options and approval mode in force, and the decisions asked for. Pure.
 */
export function stateAtRun(
  conversationId: string,
  executions: ExecutionHistory[],
  atRun: number,
  converter: PayloadConverter,
): StateAtRun {
  const timeline = buildTimeline(conversationId, executions, converter);
  const calls = timeline.items.filter(
    (item): item is ModelCallItem => item.kind === 'model_call' && item.run === atRun,
  );
  const runs = Math.max(
    0,
    ...timeline.items.map((item) => (item.kind === 'model_call' ? (item.run ?? 0) : 0)),
  );
  if (!Number.isInteger(atRun) || atRun < 1 || atRun > runs) {
    throw new TranscriptAtRunError(
      runs === 0
        ? `conversation ${conversationId} has no run`
        : `run ${atRun} is out of range: conversation ${conversationId} has runs 1 to ${runs}`,
    );
  }
  const first = calls[0];
  if (!first) {
    throw new TranscriptAtRunError(
      `the histories given do not show run ${atRun} of conversation ${conversationId} (an execution is missing)`,
    );
  }
  const recorded = new Map<string, RecordedModelCall>();
  for (const index of new Set(calls.map((call) => call.execution))) {
    for (const call of recordedModelCalls(executions[index - 1]!, converter)) {
      recorded.set(`${index}:${call.eventId}`, call);
    }
  }
  const started = timeline.items.find(
    (item) => item.kind === 'execution_started' && item.execution === first.execution,
  );
  const approvalMode = modeBefore(timeline.items, first);
  return {
    conversationId,
    run: atRun,
    runs,
    runId: executions[first.execution - 1]!.runId,
    options: started?.kind === 'execution_started' ? started.options : undefined,
    ...(approvalMode !== undefined ? { approvalMode } : {}),
    modelCalls: calls.map((call) => {
      const whole = recorded.get(`${call.execution}:${call.eventId}`);
      return {
        iteration: call.iteration,
        execution: call.execution,
        eventId: call.eventId,
        outcome: call.outcome,
        ...((whole?.model ?? call.model) !== undefined ? { model: whole?.model ?? call.model } : {}),
        ...(whole?.systemPrompt !== undefined ? { systemPrompt: whole.systemPrompt } : {}),
        toolNames: whole?.toolNames ?? [],
        messages: whole?.messages ?? [],
        ...(whole?.reply ? { answer: whole.reply } : {}),
        ...(call.usage ? { usage: call.usage } : {}),
      };
    }),
    approvals: approvalsOf(timeline.items, atRun),
  };
}

/** The mode the last `setApprovalMode` before this item set, if any. */
function modeBefore(items: TimelineItem[], before: TimelineItem): string | undefined {
  let mode: string | undefined;
  for (const item of items) {
    if (item === before) break;
    if ((item.kind === 'update' || item.kind === 'signal') && item.name === 'setApprovalMode') {
      const asked = (item.args[0] as { mode?: unknown } | undefined)?.mode;
      if (item.kind === 'update' && item.refused) continue;
      mode = typeof asked === 'string' ? asked : 'default';
    }
  }
  return mode;
}

function approvalsOf(items: TimelineItem[], run: number): ApprovalAtRun[] {
  const toolNames = new Map<string, string>();
  for (const item of items) if (item.kind === 'tool_call') toolNames.set(item.toolCallId, item.toolName);
  const decided: ApprovalAtRun[] = items.flatMap((item) =>
    item.kind === 'approval' && item.run === run && !item.refused
      ? [
          {
            toolCallId: item.toolCallId,
            ...(toolNames.has(item.toolCallId) ? { toolName: toolNames.get(item.toolCallId)! } : {}),
            decision: item.decision,
            by: item.by,
          },
        ]
      : [],
  );
  const decidedIds = new Set(decided.map((approval) => approval.toolCallId));
  // A call the model asked for in the run's last model call that neither ran nor was decided: it
  // waits for a decision (calls the workflow answered itself are followed by another model call).
  let lastCall = -1;
  items.forEach((item, index) => {
    if (item.kind === 'model_call' && item.run === run) lastCall = index;
  });
  const pending: ApprovalAtRun[] = items
    .slice(lastCall + 1)
    .flatMap((item) =>
      item.kind === 'tool_call' && item.run === run && !item.ran && !decidedIds.has(item.toolCallId)
        ? [{ toolCallId: item.toolCallId, toolName: item.toolName, decision: 'pending' }]
        : [],
    );
  return [...decided, ...pending];
}
