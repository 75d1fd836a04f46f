import { createHash, createHmac } from 'node:crypto';
import {
  WEBHOOK_SIGNATURE_HEADER,
  type WebhookConfig,
  type WebhookDelivery,
  type WebhookTarget,
} from '../shared/webhooks';
import { postNotification } from './post-notification';

/** A webhook's id: the same URL gives the same id on every worker, without putting the URL in history. */
function webhookId(url: string): string {
  return createHash('sha256').update(url).digest('hex').slice(0, 16);
}

/** What conversations are told of the worker's webhooks: ids and events, never URLs or secrets. */
export function webhookTargets(webhooks: readonly WebhookConfig[]): WebhookTarget[] {
  return webhooks.map((hook) => ({ id: webhookId(hook.url), events: hook.events }));
}

export interface WebhookDeps {
  webhooks: readonly WebhookConfig[];
  /** The gateway's public base URL, for links back (approve this call) in the bodies. */
  gatewayUrl?: string;
  /** One attempt's limit, in ms. Default 10 s. */
  timeoutMs?: number;
}

/**
 * Posts one delivery, signed: `durable-agent-signature: t=<unix seconds>,v1=<hex>` where the hex is
 * HMAC-SHA256 with the webhook's secret over `<t>.<body>`, as GitHub and Stripe sign theirs. A
 * failure is thrown, so Temporal retries it with backoff, on any worker, after a crash too.
 */
export function createDeliverWebhook(deps: WebhookDeps) {
  return async (delivery: WebhookDelivery): Promise<{ status: number }> => {
    const hook = deps.webhooks.find((candidate) => webhookId(candidate.url) === delivery.hookId);
    if (!hook)
      throw new Error(`this worker has no webhook ${delivery.hookId}; another worker of the task queue may`);
    const links = deps.gatewayUrl ? linksOf(deps.gatewayUrl.replace(/\/+$/, ''), delivery) : undefined;
    const body = JSON.stringify({
      id: delivery.deliveryId,
      type: delivery.type,
      conversationId: delivery.conversationId,
      occurredAt: new Date(delivery.occurredAt).toISOString(),
      data: delivery.data,
      ...(links ? { links } : {}),
    });
    const timestamp = Math.floor(Date.now() / 1_000);
    const signature = createHmac('sha256', hook.secret).update(`${timestamp}.${body}`).digest('hex');
    // The operator's own URLs: private addresses are theirs to name.
    return postNotification(
      {
        url: hook.url,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'durable-agent-webhooks/1',
          [WEBHOOK_SIGNATURE_HEADER]: `t=${timestamp},v1=${signature}`,
          'durable-agent-event': delivery.type,
          'durable-agent-delivery': delivery.deliveryId,
        },
        body,
        timeoutMs: deps.timeoutMs ?? 10_000,
        allowPrivateNetwork: true,
      },
      `webhook ${delivery.hookId}`,
    );
  };
}

function linksOf(base: string, delivery: WebhookDelivery): Record<string, string> {
  const conversation = `${base}/v1/conversations/${encodeURIComponent(delivery.conversationId)}`;
  const links: Record<string, string> = { conversation, events: `${conversation}/events` };
  if (delivery.type === 'approval_requested' && typeof delivery.data.toolCallId === 'string') {
    links.decide = `${conversation}/approvals/${encodeURIComponent(delivery.data.toolCallId)}`;
  }
  return links;
}
