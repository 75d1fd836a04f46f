import { type BudgetUsage, type Spent, budgetKindWords } from '../shared/budget';
import type { RunFinishedOutcome } from '../shared/events';
import {
  ChildWorkflowCancellationType,
  ParentClosePolicy,
  TimeoutFailure,
  executeChild,
  isCancellation,
  patched,
} from '@temporalio/workflow';
import { CONVERSATION_WORKFLOW_TYPE } from '../shared/constants';
import type { ConversationOptions, ConversationOptionsInput } from '../shared/conversation-options';
import type { ToolCall } from '../shared/messages';
import { SpawnArgumentsSchema, shortenedInSubAgentIds, subAgentId } from '../shared/sub-agents';
import { type ToolOutcome, errorOutcome, okOutcome } from '../shared/tool-outcome';
import { WORKFLOW_TASK_TIMEOUT_MS } from '../shared/workflow-task-bounds';
import type { ConversationBudget } from './conversation-budget';
import type { EventLog } from './event-log';

/** Histories from before a sub-agent drew its budget from its parent's started it with none. */
const SUB_AGENT_BUDGET_PATCH = 'sub-agent-budget-share';

export interface SubAgentContext {
  conversationId: string;
  run: number;
  options: ConversationOptions;
  events: EventLog;
  /** The tools the parent's model is offered in this run: the most a sub-agent may get. */
  offeredTools: readonly string[];
  /** Whether every message of the parent's run came from an owner; a sub-agent's run is an owner's only then. */
  ownersRun: boolean;
  /** The latest named sender of the parent's run. */
  senderOfRun: string | undefined;
  /** Counts the sub-agents this run started; returns the count including this one. */
  countStart: () => number;
  /** The parent's budget, which its sub-agents draw from and are counted in. */
  budget: Pick<ConversationBudget, 'spentElsewhere' | 'shareForSubAgent' | 'subAgentEnded'>;
}

/** What a finished conversation reports; a sub-agent's answer is its last run's. */
export interface SubAgentResult {
  answer?: string;
  outcome?: RunFinishedOutcome;
  /** Why the child's model provider refused, when it did and said. */
  refusal?: string;
  /** Absent from conversations of workers before sub-agents' tokens counted in their parent's budget. */
  usage?: BudgetUsage;
}

/**
 * Runs a `sessions_spawn` call: a child conversation with the task as its first message, which ends
 * after that run; its answer is the tool result. The model picks the task and may pick a profile,
 * so a child gets at most what its parent has: the tools the parent's model is offered (a profile
 * can only narrow them), the parent's owners and whether this is an owner's run, its approval
 * settings (standing decisions are the parent's own and do not carry), exec security, workspace and
 * limits, and a budget drawn from what the parent's has left (see ConversationBudget.shareForSubAgent).
 * Cancelling the call (steer, abort) cancels the child; so does the parent closing.
 */
export async function runSubAgent(
  call: ToolCall,
  args: Record<string, unknown>,
  context: SubAgentContext,
): Promise<ToolOutcome> {
  const parsed = SpawnArgumentsSchema.safeParse(args);
  if (!parsed.success) return errorOutcome(call.name, 'InvalidArgs', parsed.error.message);
  const parent = context.options;
  const limits = parent.subAgents;
  const ancestors = [...(parent.ancestors ?? []), context.conversationId];
  if (ancestors.length > limits.maxDepth) {
    return errorOutcome(
      call.name,
      'PermissionDenied',
      `sub-agents may nest ${limits.maxDepth} deep at most; this conversation is ${ancestors.length - 1} deep: do the task yourself`,
    );
  }
  const started = context.countStart();
  if (started > limits.maxPerRun) {
    return errorOutcome(
      call.name,
      'PermissionDenied',
      `a run may start ${limits.maxPerRun} sub-agents at most and this one has started ${started - 1}: do the rest yourself`,
    );
  }
  // Long parent ids get a hash in their sub-agents' ids; histories from before it keep the old ids.
  const hashLongIds =
    !shortenedInSubAgentIds(context.conversationId) || patched('sub-agent-id-hash-of-long-parent');
  const childId = subAgentId(context.conversationId, call.id, hashLongIds);
  const share =
    parent.budget !== undefined && patched(SUB_AGENT_BUDGET_PATCH)
      ? context.budget.shareForSubAgent()
      : undefined;
  if (typeof share === 'string') {
    return errorOutcome(
      call.name,
      'PermissionDenied',
      `this conversation's ${budgetKindWords(share)} has nothing left for a sub-agent: do the task yourself or answer`,
    );
  }
  const { task, profile } = parsed.data;
  context.events.record(context.run, {
    type: 'subagent_started',
    toolCallId: call.id,
    conversationId: childId,
    task: task.slice(0, 2_000),
  });
  const options = childOptions(parent, { profile, offeredTools: context.offeredTools, ancestors, share });
  // Without owners everyone is one; with them, a task from a run that was not an owner's names no sender.
  const sender = context.ownersRun ? context.senderOfRun : undefined;
  let usage: BudgetUsage | undefined;
  try {
    const result = await executeChild<(input: unknown) => Promise<SubAgentResult>>(
      CONVERSATION_WORKFLOW_TYPE,
      {
        workflowId: childId,
        args: [
          {
            options,
            initialMessage: {
              text: task,
              messageId: `${call.id}-task`,
              ...(sender !== undefined ? { sender } : {}),
            },
          },
        ],
        workflowExecutionTimeout: limits.timeoutMs,
        workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT_MS,
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
      },
    );
    if (share) usage = result.usage;
    else if (result.usage) context.budget.spentElsewhere(subAgentSpent(result.usage));
    if (result.outcome === 'answered') {
      return okOutcome({
        content: [{ type: 'text', text: result.answer || '(the sub-agent gave an empty answer)' }],
        details: { conversationId: childId },
      });
    }
    if (result.outcome === 'budget_exhausted') {
      return errorOutcome(
        call.name,
        'ExecutionFailed',
        `the sub-agent (${childId}) stopped at its budget, its share of what this conversation had left`,
      );
    }
    if (result.outcome === 'refused') {
      return errorOutcome(
        call.name,
        'ExecutionFailed',
        `the sub-agent's model provider refused to answer (${childId})${result.refusal ? `: ${result.refusal}` : ''}`,
      );
    }
    return errorOutcome(
      call.name,
      'ExecutionFailed',
      `the sub-agent (${childId}) ended without an answer (${result.outcome ?? 'unknown'}); its events say why`,
    );
  } catch (error) {
    if (isCancellation(error)) throw error;
    if ((error as { cause?: unknown }).cause instanceof TimeoutFailure) {
      return errorOutcome(
        call.name,
        'Timeout',
        `the sub-agent (${childId}) did not finish within ${limits.timeoutMs / 1_000}s and was stopped`,
      );
    }
    return errorOutcome(
      call.name,
      'ExecutionFailed',
      `the sub-agent (${childId}) failed: ${(error as Error).message}`,
    );
  } finally {
    if (share) context.budget.subAgentEnded(share, usage);
  }
}

/**
 * A sub-agent's options: the parent's model, prompts, workspace, approval settings, exec security and
 * limits, at most the tools the parent's model is offered, one run, and its share of the budget.
 */
function childOptions(
  parent: ConversationOptions,
  {
    profile,
    offeredTools,
    ancestors,
    share,
  }: {
    profile: ConversationOptionsInput['profile'];
    offeredTools: readonly string[];
    ancestors: string[];
    share: ConversationOptionsInput['budget'] | undefined;
  },
): ConversationOptionsInput {
  return {
    ...(parent.model !== undefined ? { model: parent.model } : {}),
    ...(parent.systemPrompt !== undefined ? { systemPrompt: parent.systemPrompt } : {}),
    ...(parent.appendSystemPrompt !== undefined ? { appendSystemPrompt: parent.appendSystemPrompt } : {}),
    ...(parent.workspace !== undefined ? { workspace: parent.workspace } : {}),
    ...(parent.agentId !== undefined ? { agentId: parent.agentId } : {}),
    ...(parent.execSecurity !== undefined ? { execSecurity: parent.execSecurity } : {}),
    maxToolIterations: parent.maxToolIterations,
    approval: parent.approval,
    compaction: parent.compaction,
    subAgents: parent.subAgents,
    ...((profile ?? parent.profile) !== undefined ? { profile: profile ?? parent.profile } : {}),
    // A requested profile narrows; the parent's extra tools come along only with the parent's profile.
    ...(profile === undefined && parent.alsoAllow !== undefined ? { alsoAllow: parent.alsoAllow } : {}),
    allow: [...offeredTools],
    ...(parent.deny !== undefined ? { deny: parent.deny } : {}),
    ...(parent.owners !== undefined ? { owners: parent.owners } : {}),
    endAfterFirstRun: true,
    ancestors,
    ...(share !== undefined ? { budget: share } : {}),
  };
}

/** A sub-agent's run usage without its tool calls, which its parent does not count as its own. */
function subAgentSpent({ toolCalls: _toolCalls, ...spent }: Spent & { toolCalls?: number }): Spent {
  return spent;
}
