/**
 * The workflow API (`durable-agent/workflow`): `runAgent` runs an agent conversation as a step of a
 * workflow of yours. Safe to import in workflow code.
 *
 * @module durable-agent/workflow
 */
import {
  ChildWorkflowCancellationType,
  ParentClosePolicy,
  executeChild,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { BudgetUsage } from '../shared/budget';
import { CONVERSATION_WORKFLOW_TYPE } from '../shared/constants';
import type { ConversationStartInput } from '../shared/conversation-api';
import type { ConversationOptionsInput } from '../shared/conversation-options';
import type { RunFinishedOutcome } from '../shared/events';
import { WORKFLOW_TASK_TIMEOUT_MS } from '../shared/workflow-task-bounds';
import type { ConversationResult } from './conversation';

export type { ConversationOptionsInput } from '../shared/conversation-options';
export type { RunFinishedOutcome } from '../shared/events';
export type { BudgetUsage } from '../shared/budget';

/** One agent step of your workflow: the task, and the conversation options it runs with. */
export interface AgentStepOptions {
  /** The task, as the conversation's first message. */
  prompt: string;
  /**
   * The conversation's workflow id, by which approvals, steer and abort reach it. Default: your
   * workflow's id, `-agent-` and a short id that stays the same on replay.
   */
  conversationId?: string;
  /** Who sends the task, for conversations whose `owners` decide which tools may run. */
  sender?: string;
  /**
   * The conversation's options: model, tools (`allow`, `deny`, `profile`), approval settings,
   * budget, workspace, system prompt. It always ends after this one run.
   */
  options?: Omit<ConversationOptionsInput, 'endAfterFirstRun' | 'ancestors' | 'rerun'>;
  /** The task queue of the workers that run conversations. Default: your workflow's. */
  taskQueue?: string;
  /** How long the step may take, approvals included, before it is stopped (ms). Unbounded when absent. */
  timeoutMs?: number;
}

/** What an agent step ended with. */
export interface AgentStepResult {
  /** The conversation's workflow id: its events and history are there. */
  conversationId: string;
  /**
   * How the run ended: `answered`, or why it did not (`refused` by the model's provider, `aborted`,
   * `error`, `max_tool_iterations`, `budget_exhausted`).
   */
  outcome: RunFinishedOutcome | undefined;
  /** The model's last answer; present when `outcome` is `answered`. */
  answer: string | undefined;
  /** Why the model's provider refused, in its words, when `outcome` is `refused` and it said. */
  refusal?: string;
  /** Tokens and tool calls the step spent, its sub-agents' included. */
  usage: BudgetUsage | undefined;
}

/**
 * Runs an agent conversation as a child workflow of yours and waits for its answer: one step of a
 * workflow such as "triage the ticket with an agent, wait for a person, then deploy". The child is
 * an ordinary conversation, so its approvals, steer and abort reach it by its id while you wait.
 * Cancelling your workflow (or the scope of this call) cancels the conversation; your workflow
 * closing does too. Call it from workflow code only.
 */
export async function runAgent(step: AgentStepOptions): Promise<AgentStepResult> {
  const info = workflowInfo();
  const conversationId = step.conversationId ?? `${info.workflowId}-agent-${uuid4().slice(0, 8)}`;
  const input: ConversationStartInput = {
    options: { ...step.options, endAfterFirstRun: true },
    initialMessage: {
      text: step.prompt,
      messageId: `${conversationId}-task`,
      ...(step.sender !== undefined ? { sender: step.sender } : {}),
    },
  };
  const result = await executeChild<(input: ConversationStartInput) => Promise<ConversationResult>>(
    CONVERSATION_WORKFLOW_TYPE,
    {
      workflowId: conversationId,
      args: [input],
      taskQueue: step.taskQueue ?? info.taskQueue,
      ...(step.timeoutMs !== undefined ? { workflowExecutionTimeout: step.timeoutMs } : {}),
      // What a worker killed mid-task costs the conversation, as for every conversation.
      workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT_MS,
      parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
      cancellationType: ChildWorkflowCancellationType.WAIT_CANCELLATION_COMPLETED,
    },
  );
  return {
    conversationId,
    outcome: result.outcome,
    answer: result.answer,
    ...(result.refusal !== undefined ? { refusal: result.refusal } : {}),
    usage: result.usage,
  };
}
