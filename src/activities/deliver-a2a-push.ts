import { A2A_NOTIFICATION_TOKEN_HEADER, type A2APushDelivery } from '../shared/a2a-push';
import { postNotification } from './post-notification';

/** How the worker posts A2A push notifications. */
export interface A2APushDeps {
  /** Lets notifications reach loopback, private and link-local addresses (DURABLE_AGENT_A2A_PUSH_ALLOW_PRIVATE). */
  allowPrivateNetwork?: boolean;
  /** One attempt's limit, in ms. Default 10 s. */
  timeoutMs?: number;
}

/** The media type of A2A's JSON bodies, as the A2A SDKs send push notifications. */
const A2A_CONTENT_TYPE = 'application/a2a+json';

/**
 * Posts one A2A push notification: the task's status update as a StreamResponse, the config's
 * `token` in `X-A2A-Notification-Token`, its authentication as `Authorization`, and the
 * notification's id (also in the update's metadata) in `durable-agent-delivery`, the same in every
 * retry, for the receiver to drop repeats.
 */
export function createDeliverA2APush(deps: A2APushDeps = {}) {
  return async (delivery: A2APushDelivery): Promise<{ status: number }> =>
    postNotification(
      {
        url: delivery.url,
        headers: {
          'content-type': A2A_CONTENT_TYPE,
          'user-agent': 'durable-agent-a2a-push/1',
          'durable-agent-delivery': delivery.notificationId,
          ...(delivery.token !== undefined ? { [A2A_NOTIFICATION_TOKEN_HEADER]: delivery.token } : {}),
          ...(delivery.authentication
            ? { authorization: `${delivery.authentication.scheme} ${delivery.authentication.credentials}` }
            : {}),
        },
        body: JSON.stringify(delivery.body),
        timeoutMs: deps.timeoutMs ?? 10_000,
        allowPrivateNetwork: deps.allowPrivateNetwork ?? false,
      },
      'A2A push notification receiver',
    );
}
