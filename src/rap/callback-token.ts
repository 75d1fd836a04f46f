import { createHmac, timingSafeEqual } from 'node:crypto';

/** What a callback URL is bound to: one call of one conversation, and the activity it completes. */
export interface CallbackBinding {
  conversationId: string;
  toolCallId: string;
  /** The invoking activity attempt's task token. */
  taskToken: Uint8Array;
  /** The tool's name, for the hooks that finish its result; absent in URLs made before it was carried. */
  toolName?: string;
}

/**
 * Callback URL paths carry their binding and an HMAC of it under the workers' shared secret, so
 * any worker's callback server (a restarted one included) can check and use them without state,
 * and nobody without the secret can make one.
 */
export function callbackPath(binding: CallbackBinding, secret: Buffer): string {
  const payload = Buffer.from(
    JSON.stringify({
      c: binding.conversationId,
      t: binding.toolCallId,
      k: Buffer.from(binding.taskToken).toString('base64url'),
      ...(binding.toolName !== undefined ? { n: binding.toolName } : {}),
    }),
  ).toString('base64url');
  return `/rap/callback/${payload}.${sign(payload, secret)}`;
}

/** The binding of a callback path, or undefined when it was not made with `secret`. */
export function verifyCallbackPath(pathname: string, secret: Buffer): CallbackBinding | undefined {
  const match = /^\/rap\/callback\/([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/.exec(pathname);
  if (!match) return undefined;
  const [, payload, signature] = match as unknown as [string, string, string];
  const expected = Buffer.from(sign(payload, secret));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
  try {
    const fields = JSON.parse(Buffer.from(payload, 'base64url').toString()) as {
      c: string;
      t: string;
      k: string;
      n?: string;
    };
    return {
      conversationId: fields.c,
      toolCallId: fields.t,
      taskToken: Buffer.from(fields.k, 'base64url'),
      ...(typeof fields.n === 'string' ? { toolName: fields.n } : {}),
    };
  } catch {
    return undefined;
  }
}

function sign(payload: string, secret: Buffer): string {
  return createHmac('sha256', secret).update(payload).digest('base64url');
}
