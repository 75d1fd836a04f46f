import type { WorkflowHandle } from '@temporalio/client';

/**
 * One call to Temporal that `signal` cancels. The Temporal client adds a listener to the signal it
 * is given for every call and never removes it, so a stream that polls for hours with one signal
 * would keep every call it ever made; each call gets a signal of its own here, tied to `signal`
 * only while the call is in flight.
 */
export async function abortableCall<T>(
  handle: WorkflowHandle,
  signal: AbortSignal | undefined,
  call: () => Promise<T>,
): Promise<T> {
  if (!signal) return call();
  const own = new AbortController();
  const forward = () => own.abort(signal.reason);
  if (signal.aborted) forward();
  else signal.addEventListener('abort', forward, { once: true });
  try {
    return await handle.client.withAbortSignal(own.signal, call);
  } finally {
    signal.removeEventListener('abort', forward);
  }
}
