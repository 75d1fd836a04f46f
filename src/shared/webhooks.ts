import { z } from 'zod';

/**
 * What a service can be told by webhook. `run_failed` is a run that ended with an error;
 * `approval_escalated` and `approval_expired` are an approval policy's deadlines passing.
 */
export const WEBHOOK_EVENTS = [
  'approval_requested',
  'approval_escalated',
  'approval_expired',
  'run_finished',
  'run_failed',
  'conversation_ended',
] as const;
export const WebhookEventTypeSchema = z.enum(WEBHOOK_EVENTS);
export type WebhookEventType = z.infer<typeof WebhookEventTypeSchema>;

/** One webhook of the worker's configuration file; unknown keys are refused, as in the file itself. */
export const WebhookConfigSchema = z.strictObject({
  /** Where events are POSTed (http or https). */
  url: z.url({ protocol: /^https?$/ }),
  /** Which kinds of event are posted. */
  events: z.array(WebhookEventTypeSchema).min(1),
  /** Signs every body (HMAC-SHA256); the receiver checks it with the same secret. */
  secret: z.string().min(16, 'a webhook secret has at least 16 characters'),
});
/**
 * A webhook: the URL that receives a conversation's events, which events, and the secret that
 * signs them.
 *
 * @useDeclaredType
 */
export type WebhookConfig = z.infer<typeof WebhookConfigSchema>;
export const WebhookFileSchema = z.strictObject({ webhooks: z.array(WebhookConfigSchema) });

/**
 * What a conversation knows of a webhook: an id derived from its URL and the events it wants.
 * The URL and secret stay with the worker, out of workflow history.
 */
export interface WebhookTarget {
  id: string;
  events: WebhookEventType[];
}

/** One delivery, as the workflow schedules it; the worker adds the URL, signature and links. */
export interface WebhookDelivery {
  hookId: string;
  /** Stable across retries and workers, never reused by another event: a receiver drops a delivery it has already seen. */
  deliveryId: string;
  type: WebhookEventType;
  conversationId: string;
  /** Workflow time of the event, in ms. */
  occurredAt: number;
  data: Record<string, unknown>;
}

/** The header carrying `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export const WEBHOOK_SIGNATURE_HEADER = 'durable-agent-signature';
