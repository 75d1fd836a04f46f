import { workflowInfo } from '@temporalio/workflow';
import type { PendingApproval } from '../shared/approvals';
import type { AgentEvent } from '../shared/events';
import { POLICY_DECIDER } from '../shared/approval-policy';
import type { WebhookEventType, WebhookTarget } from '../shared/webhooks';
import { webhookActivities } from './activity-proxies';
import type { InFlightDeliveries } from './in-flight-deliveries';
import { workflowTime } from './workflow-time';

/** Whole arguments of a pending call, which events only preview, and the policy it is asked under. */
export type PendingArguments = (
  toolCallId: string,
) => Pick<PendingApproval, 'arguments' | 'argumentsSha256' | 'policy'> | undefined;

/**
 * Deliveries of the conversation's events to the worker's webhooks, each an activity: recorded in
 * history, retried with backoff by any worker, after a crash too, among the conversation's
 * deliveries in flight.
 */
export class WebhookOutbox {
  /**
   * What delivery ids start with: the conversation and the run that recorded the event. A receiver
   * drops ids it has seen, so they must never repeat: not when the same conversation id is started
   * again after it ended, nor when a reset does a run's events over.
   */
  private readonly idPrefix: string;

  constructor(
    private readonly conversationId: string,
    private readonly targets: readonly WebhookTarget[],
    private readonly pendingArguments: PendingArguments,
    private readonly deliveries: InFlightDeliveries,
  ) {
    this.idPrefix = `${conversationId}/${workflowInfo().runId}`;
  }

  /** Called for every recorded event; sends those a webhook wants. */
  eventRecorded(event: AgentEvent): void {
    if (event.type === 'approval_requested') {
      const whole = this.pendingArguments(event.toolCallId);
      this.send('approval_requested', `${this.idPrefix}/${event.seq}`, event.at, {
        run: event.run,
        toolCallId: event.toolCallId,
        toolName: event.toolName,
        arguments: whole?.arguments ?? event.args,
        argumentsSha256: whole?.argumentsSha256 ?? event.argsSha256,
        risk: event.risk,
        ...(whole?.policy ? { policy: askedOf(whole.policy) } : {}),
      });
    } else if (event.type === 'approval_escalated') {
      this.send('approval_escalated', `${this.idPrefix}/${event.seq}`, event.at, {
        run: event.run,
        toolCallId: event.toolCallId,
        toolName: event.toolName,
        to: event.to,
        members: event.members,
        quorum: event.quorum,
      });
    } else if (event.type === 'approval_decided' && event.by === POLICY_DECIDER) {
      this.send('approval_expired', `${this.idPrefix}/${event.seq}`, event.at, {
        run: event.run,
        toolCallId: event.toolCallId,
        toolName: event.toolName,
        reason: event.reason,
      });
    } else if (event.type === 'run_finished') {
      this.send(
        event.outcome === 'error' ? 'run_failed' : 'run_finished',
        `${this.idPrefix}/${event.seq}`,
        event.at,
        {
          run: event.run,
          outcome: event.outcome,
          answer: event.answer,
          ...(event.refusal !== undefined ? { refusal: event.refusal } : {}),
        },
      );
    }
  }

  ended(data: Record<string, unknown>): void {
    this.send('conversation_ended', `${this.idPrefix}/ended`, workflowTime(), data);
  }

  private send(
    type: WebhookEventType,
    deliveryId: string,
    occurredAt: number,
    data: Record<string, unknown>,
  ): void {
    for (const target of this.targets) {
      if (!target.events.includes(type)) continue;
      this.deliveries.start(() =>
        webhookActivities.deliverWebhook.executeWithOptions({ summary: `webhook ${target.id}: ${type}` }, [
          {
            hookId: target.id,
            deliveryId: `${deliveryId}/${target.id}`,
            type,
            conversationId: this.conversationId,
            occurredAt,
            data,
          },
        ]),
      );
    }
  }
}

/** Who a request under a policy is asked of, and its deadlines, for a receiver that routes it. */
function askedOf(policy: NonNullable<PendingApproval['policy']>) {
  return {
    rule: policy.rule,
    group: policy.group,
    ...(policy.escalation ? { escalation: policy.escalation } : {}),
    ...(policy.expiry ? { expiresAt: policy.expiry.at } : {}),
  };
}
