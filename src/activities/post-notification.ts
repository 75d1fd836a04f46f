import http from 'node:http';
import https from 'node:https';
import { ApplicationFailure } from '@temporalio/activity';
import { BlockedAddressError, isPublicAddress, publicOnlyLookup } from '../tools/builtin/network-guard';

export interface NotificationPost {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** The attempt's limit, in ms. */
  timeoutMs: number;
  /** Lets the POST reach loopback, private and link-local addresses; otherwise they are refused. */
  allowPrivateNetwork: boolean;
}

/** Statuses that say the receiver will never take this notification; anything else is tried again. */
const FINAL_STATUSES = new Set([400, 401, 403, 404, 405, 410, 413, 422]);

/**
 * One attempt at a notification (a webhook delivery, an A2A push notification): a POST that
 * follows no redirect, reads none of the answer's body (its status is all that counts), and unless
 * allowed reaches only public addresses, checked on the very addresses connected to. Succeeds on
 * 2xx; a refusal for good or a refused address fails without retry, anything else fails so
 * Temporal retries it with backoff, on any worker.
 */
export async function postNotification(post: NotificationPost, what: string): Promise<{ status: number }> {
  const url = new URL(post.url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!post.allowPrivateNetwork && isIpLiteral(host) && !isPublicAddress(host))
    throw refused(what, new BlockedAddressError(host, host));
  let status: number;
  try {
    status = await statusOfPost(url, post);
  } catch (error) {
    if (error instanceof BlockedAddressError) throw refused(what, error);
    throw new Error(`${what} not reached: ${(error as Error).message}`);
  }
  if (status >= 200 && status < 300) return { status };
  const message = `${what} answered ${status}`;
  if (FINAL_STATUSES.has(status)) throw ApplicationFailure.nonRetryable(message, 'NotificationRefused');
  throw new Error(message);
}

function refused(what: string, error: BlockedAddressError): ApplicationFailure {
  return ApplicationFailure.nonRetryable(
    `${what} refused: ${error.message}; the operator allows those addresses with DURABLE_AGENT_A2A_PUSH_ALLOW_PRIVATE`,
    'NotificationAddressRefused',
  );
}

function isIpLiteral(host: string): boolean {
  return /^[\d.]+$/.test(host) || host.includes(':');
}

function statusOfPost(url: URL, post: NotificationPost): Promise<number> {
  return new Promise((resolve, reject) => {
    const client = url.protocol === 'https:' ? https : http;
    const outgoing = client.request(
      url,
      {
        method: 'POST',
        signal: AbortSignal.timeout(post.timeoutMs),
        // No pooled sockets: each attempt is checked and connected on its own.
        agent: false,
        headers: { ...post.headers, 'content-length': String(Buffer.byteLength(post.body)) },
        ...(post.allowPrivateNetwork ? {} : { lookup: publicOnlyLookup }),
      },
      (response) => {
        // The answer's body is never read: whatever the receiver sends, it costs nothing here.
        response.destroy();
        resolve(response.statusCode ?? 0);
      },
    );
    outgoing.on('error', reject);
    outgoing.end(post.body);
  });
}
