import { metricMeter } from '@temporalio/workflow';
import { METRIC, recordCount } from '../shared/agent-metrics';
import { POLICY_DECIDER } from '../shared/approval-policy';
import type { AgentEvent } from '../shared/events';

/**
 * Approval and budget metrics, from the conversation's events: requests and decisions per tool and
 * how long each decision took (workflow time), tokens per finished run, runs stopped at their budget. The workflow's meter stays silent while a history replays,
 * so a worker that picks a conversation up does not count its past again.
 */
export class ConversationMetrics {
  private readonly requestedAt = new Map<string, number>();

  eventRecorded(event: AgentEvent): void {
    if (event.type === 'approval_requested') {
      this.requestedAt.set(event.toolCallId, event.at);
      recordCount(metricMeter, METRIC.approvalsRequested, { tool: event.toolName });
    } else if (event.type === 'run_finished' && event.usage) {
      metricMeter
        .createHistogram(METRIC.runTokens, 'int', 'tokens')
        .record(event.usage.tokens, { outcome: event.outcome });
    } else if (event.type === 'approval_escalated') {
      recordCount(metricMeter, METRIC.approvalsEscalated, { tool: event.toolName });
    } else if (event.type === 'budget_exhausted') {
      recordCount(metricMeter, METRIC.budgetStops, { budget: event.budget });
    } else if (event.type === 'approval_decided') {
      recordCount(metricMeter, METRIC.approvalsDecided, { tool: event.toolName, decision: event.decision });
      if (event.by === POLICY_DECIDER)
        recordCount(metricMeter, METRIC.approvalsExpired, { tool: event.toolName });
      const askedAt = this.requestedAt.get(event.toolCallId);
      this.requestedAt.delete(event.toolCallId);
      if (askedAt !== undefined) {
        metricMeter
          .createHistogram(METRIC.approvalWait, 'int', 'ms')
          .record(Math.max(0, event.at - askedAt), { tool: event.toolName });
      }
    }
  }
}
