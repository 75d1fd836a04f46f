import { SearchAttributeType, defineSearchAttributeKey } from '@temporalio/common';
import { setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import { toolCallSummary } from '../shared/activity-summary';
import { parsedArguments } from '../shared/parsed-arguments';
import type { AgentEvent } from '../shared/events';
import { SEARCH_ATTRIBUTES, type VisibleStatus } from '../shared/search-attributes';
import { workflowTime } from './workflow-time';

const AGENT_ID = defineSearchAttributeKey(SEARCH_ATTRIBUTES.agentId, SearchAttributeType.KEYWORD);
const STATUS = defineSearchAttributeKey(SEARCH_ATTRIBUTES.status, SearchAttributeType.KEYWORD);
const LAST_ACTIVITY = defineSearchAttributeKey(SEARCH_ATTRIBUTES.lastActivity, SearchAttributeType.DATETIME);

const MAX_LISTED = 10;

/**
 * What the Web UI shows of a conversation while it lives: its current details (running which tools,
 * waiting for which approvals) and, when the worker has them registered, its search attributes. Fed
 * by the event log. Details cost no history; a search attribute upsert is a command, so it is made
 * only when the status changes.
 */
export class ConversationVisibility {
  private readonly running = new Map<string, string>();
  private readonly awaiting = new Map<string, string>();
  private runInProgress: number | undefined;
  private published: VisibleStatus | undefined;

  /** `searchAttributes`: the worker has the attributes registered (absent: details only). */
  constructor(private readonly searchAttributes: { agentId: string } | undefined) {}

  /** Publishes the state at the start of an execution (a run may already be in progress, resumed). */
  start(runInProgress: number | undefined): void {
    this.runInProgress = runInProgress;
    if (this.searchAttributes) {
      upsertSearchAttributes([{ key: AGENT_ID, value: this.searchAttributes.agentId }]);
    }
    this.publish();
  }

  eventRecorded(event: AgentEvent): void {
    switch (event.type) {
      case 'run_started':
        this.runInProgress = event.run;
        break;
      case 'run_finished':
        this.runInProgress = undefined;
        this.running.clear();
        this.awaiting.clear();
        break;
      case 'approval_requested':
        this.awaiting.set(event.toolCallId, toolCallSummary(event.toolName, parsedArguments(event.args)));
        break;
      case 'approval_decided':
        this.awaiting.delete(event.toolCallId);
        break;
      case 'tool_execution_start':
        this.awaiting.delete(event.toolCallId);
        this.running.set(event.toolCallId, toolCallSummary(event.toolName, parsedArguments(event.args)));
        break;
      case 'tool_execution_end':
        this.running.delete(event.toolCallId);
        break;
      default:
        return;
    }
    this.publish();
  }

  private status(): VisibleStatus {
    if (this.runInProgress === undefined) return 'idle';
    return this.awaiting.size > 0 ? 'awaiting_approval' : 'running';
  }

  private publish(): void {
    const status = this.status();
    setCurrentDetails(this.details(status));
    if (!this.searchAttributes || status === this.published) return;
    this.published = status;
    upsertSearchAttributes([
      { key: STATUS, value: status },
      { key: LAST_ACTIVITY, value: new Date(workflowTime()) },
    ]);
  }

  private details(status: VisibleStatus): string {
    if (status === 'idle') return 'Idle: waiting for a message.';
    const lines = [
      `Run ${this.runInProgress}: ${status === 'running' ? 'running' : 'waiting for approval'}.`,
    ];
    if (this.awaiting.size > 0) lines.push('', 'Waiting for approval:', ...listed(this.awaiting));
    if (this.running.size > 0) lines.push('', 'Running:', ...listed(this.running));
    return lines.join('\n');
  }
}

function listed(calls: ReadonlyMap<string, string>): string[] {
  const lines = [...calls].slice(0, MAX_LISTED).map(([id, summary]) => `- ${summary} (${id})`);
  if (calls.size > MAX_LISTED) lines.push(`- and ${calls.size - MAX_LISTED} more`);
  return lines;
}
