// Conversations as a person supervising them sees them: from Temporal visibility and the search
// attributes every conversation keeps, without asking any workflow, so ended ones are listed too.
import type { WorkflowExecutionStatusName } from '@temporalio/client';
import { DEFAULT_AGENT_ID } from '../shared/agent-id';
import { CONVERSATION_WORKFLOW_TYPE } from '../shared/constants';
import { type ConversationSpent, spentOf } from '../shared/conversation-spent';
import { SEARCH_ATTRIBUTES, type VisibleStatus } from '../shared/search-attributes';
import type { ClientContext } from './client-context';

/** What a list of conversations shows of one. */
export interface ConversationOverview {
  /** The conversation's id. */
  conversationId: string;
  /** Its agent (`default` when it names none). */
  agentId: string;
  /** idle, running or awaiting_approval while it lasts; `ended` once its workflow has closed. */
  status: VisibleStatus | 'ended';
  /** How its workflow stands: RUNNING, or how it ended (COMPLETED, FAILED, TERMINATED, …). */
  executionStatus: WorkflowExecutionStatusName;
  /** When its current execution started. */
  startTime: Date;
  /** When it ended; absent while it lasts. */
  closeTime?: Date;
  /** When its status last changed. */
  lastActivity?: Date;
  /** Runs, tokens and tool calls as of its last finished run; absent before one (or from older workers). */
  spent?: ConversationSpent;
}

/** Which conversations `AgentClient.overview` lists. */
export interface OverviewFilter {
  /** Only conversations in this status. */
  status?: VisibleStatus | 'ended';
  /** Only this agent's conversations. */
  agentId?: string;
  /** Only conversations whose id starts with one of these. */
  idPrefixes?: readonly string[];
  /** At most this many, newest first (default 500). */
  limit?: number;
}

const DEFAULT_LIMIT = 500;

/** Conversations of this client's task queue matching `filter`, newest first; visibility may lag by a moment. */
export async function overview(
  context: ClientContext,
  filter: OverviewFilter = {},
): Promise<ConversationOverview[]> {
  const limit = filter.limit ?? DEFAULT_LIMIT;
  const found: ConversationOverview[] = [];
  for await (const execution of context.client.workflow.list({
    query: overviewQuery(context.taskQueue, filter),
  })) {
    const listing = overviewOf(execution);
    // Prefixes are matched here: visibility stores differ in how they match the start of an id.
    if (filter.idPrefixes && !filter.idPrefixes.some((prefix) => listing.conversationId.startsWith(prefix)))
      continue;
    found.push(listing);
    if (found.length >= limit) break;
  }
  return found;
}

function overviewQuery(taskQueue: string, filter: OverviewFilter): string {
  const clauses = [
    `WorkflowType = ${quoted(CONVERSATION_WORKFLOW_TYPE)}`,
    `TaskQueue = ${quoted(taskQueue)}`,
    // A conversation that continued as new goes on in its next execution, which is listed instead.
    `ExecutionStatus != 'ContinuedAsNew'`,
  ];
  if (filter.status === 'ended') clauses.push(`ExecutionStatus != 'Running'`);
  else if (filter.status)
    clauses.push(`ExecutionStatus = 'Running'`, `${SEARCH_ATTRIBUTES.status} = ${quoted(filter.status)}`);
  if (filter.agentId) clauses.push(`${SEARCH_ATTRIBUTES.agentId} = ${quoted(filter.agentId)}`);
  // Newest first is visibility's own order (SQL stores take no ORDER BY).
  return clauses.join(' AND ');
}

function overviewOf(execution: {
  workflowId: string;
  status: { name: WorkflowExecutionStatusName };
  startTime: Date;
  closeTime?: Date | undefined;
  searchAttributes: Record<string, unknown>;
  memo?: Record<string, unknown> | undefined;
}): ConversationOverview {
  const attributes = execution.searchAttributes;
  const first = (key: string) => (attributes[key] as unknown[] | undefined)?.[0];
  const running = execution.status.name === 'RUNNING';
  const visible = first(SEARCH_ATTRIBUTES.status);
  const lastActivity = first(SEARCH_ATTRIBUTES.lastActivity);
  const spent = spentOf(execution.memo);
  return {
    conversationId: execution.workflowId,
    agentId:
      typeof first(SEARCH_ATTRIBUTES.agentId) === 'string'
        ? (first(SEARCH_ATTRIBUTES.agentId) as string)
        : DEFAULT_AGENT_ID,
    status: running ? (typeof visible === 'string' ? (visible as VisibleStatus) : 'idle') : 'ended',
    executionStatus: execution.status.name,
    startTime: execution.startTime,
    ...(execution.closeTime ? { closeTime: execution.closeTime } : {}),
    ...(lastActivity instanceof Date
      ? { lastActivity }
      : typeof lastActivity === 'string'
        ? { lastActivity: new Date(lastActivity) }
        : {}),
    ...(spent ? { spent } : {}),
  };
}

function quoted(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
