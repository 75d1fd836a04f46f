import type { A2AArtifact, A2AMessageOut, A2APart, A2ATaskState, A2ATaskStatus } from './a2a';
import type { PendingApproval } from './approvals';
import type { AgentEvent } from './events';
import { policyProgress } from './pending-policy';

/** The task a stream or a view is about: its id, its context (conversation) and its message. */
export interface TaskRef {
  taskId: string;
  contextId: string;
  messageId: string;
}

type RunFinished = Extract<AgentEvent, { type: 'run_finished' }>;

/** The artifact that holds a run's answer. */
export const ANSWER_ARTIFACT_ID = 'answer';

/** An agent message of the task; its id is made from where it stands, so every reader makes the same. */
export function agentMessage(ref: TaskRef, key: string, parts: A2APart[]): A2AMessageOut {
  return {
    messageId: `${ref.messageId}:${key}`,
    contextId: ref.contextId,
    taskId: ref.taskId,
    role: 'ROLE_AGENT',
    parts,
  };
}

export function statusOf(
  ref: TaskRef,
  state: A2ATaskState,
  at: number,
  message?: { key: string; parts: A2APart[] },
): A2ATaskStatus {
  return {
    state,
    timestamp: new Date(at).toISOString(),
    ...(message ? { message: agentMessage(ref, message.key, message.parts) } : {}),
  };
}

/**
 * What waits for the caller, one data part per pending approval: the tool and its whole arguments
 * (cut past PENDING_ARGUMENTS_CHARS, then `argumentsTruncated`), their SHA-256 (what a decision
 * must name), the risk, and under an approval policy whom it asks and how far it has come. A budget
 * pause is one too: allowing it raises the budget.
 */
export function approvalParts(pending: readonly PendingApproval[]): A2APart[] {
  const words = pending
    .map((approval) =>
      approval.budget ? `the run paused at its ${approval.budget.kind} budget` : `${approval.toolName} waits`,
    )
    .join('; ');
  return [
    { text: `A decision is needed: ${words}.`, mediaType: 'text/plain' },
    ...pending.map((approval): A2APart => ({
      mediaType: 'application/json',
      data: {
        kind: 'approval_request',
        toolCallId: approval.toolCallId,
        tool: approval.toolName,
        arguments: approval.arguments,
        ...(approval.argumentsTruncated ? { argumentsTruncated: true } : {}),
        argumentsSha256: approval.argumentsSha256,
        risk: approval.risk,
        ...(approval.budget ? { budget: approval.budget } : {}),
        ...(approval.policy
          ? { policy: { ...approval.policy, progress: policyProgress(approval.policy) } }
          : {}),
        ...(approval.expiresAt !== undefined
          ? { expiresAt: new Date(approval.expiresAt).toISOString() }
          : {}),
      },
    })),
  ];
}

/** The state a finished run leaves its task in: answered is completed, aborted canceled, the rest failed. */
export function finalStateOf(finished: RunFinished): A2ATaskState {
  if (finished.outcome === 'answered') return 'TASK_STATE_COMPLETED';
  if (finished.outcome === 'aborted') return 'TASK_STATE_CANCELED';
  return 'TASK_STATE_FAILED';
}

/** Why a run ended without an answer, in words, from its `run_finished` and the events of its run before it. */
export function reasonOf(finished: RunFinished, runEvents: readonly AgentEvent[]): string {
  switch (finished.outcome) {
    case 'answered':
      return finished.answer;
    case 'refused':
      return `the model's provider refused to answer${finished.refusal ? `: ${finished.refusal}` : ''}`;
    case 'max_tool_iterations':
      return 'the run reached its limit of tool iterations without an answer';
    case 'aborted': {
      const aborted = lastOf(runEvents, 'aborted');
      return `canceled${aborted?.by ? ` by ${aborted.by}` : ''}${aborted?.reason ? `: ${aborted.reason}` : ''}`;
    }
    case 'budget_exhausted': {
      const spent = lastOf(runEvents, 'budget_exhausted');
      if (!spent) return 'the run reached its budget';
      return `the run reached its ${spent.budget} budget (${spent.used} of ${spent.limit}) and ${spent.by} stopped it`;
    }
    case 'error': {
      const error = lastOf(runEvents, 'error');
      return `the run failed${error ? `: ${error.message}` : ''}`;
    }
  }
}

/** The status a finished run's task ends with: its answer, or why there is none. */
export function finalStatusOf(
  ref: TaskRef,
  finished: RunFinished,
  runEvents: readonly AgentEvent[],
): A2ATaskStatus {
  const text = reasonOf(finished, runEvents);
  return statusOf(ref, finalStateOf(finished), finished.at, {
    key: `end-${finished.run}`,
    parts: text ? [{ text, mediaType: 'text/plain' }] : [],
  });
}

/** The answer as the task's artifact; none when the run ended without one. */
export function answerArtifact(finished: RunFinished): A2AArtifact | undefined {
  if (finished.outcome !== 'answered' || finished.answer === '') return undefined;
  return {
    artifactId: ANSWER_ARTIFACT_ID,
    name: 'answer',
    parts: [{ text: finished.answer, mediaType: 'text/plain' }],
  };
}

/** The last event of `type` among `events`. */
function lastOf<T extends AgentEvent['type']>(
  events: readonly AgentEvent[],
  type: T,
): Extract<AgentEvent, { type: T }> | undefined {
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index]!;
    if (event.type === type) return event as Extract<AgentEvent, { type: T }>;
  }
  return undefined;
}
