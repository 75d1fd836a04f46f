import { getEventListeners } from 'node:events';
import type { WorkflowHandle } from '@temporalio/client';
import { abortableCall } from '../../src/client/abortable-call';

/** A handle whose client treats the signal as Temporal's does: a listener per call, never removed. */
function handleLikeTemporals(): { handle: WorkflowHandle; signalsSeen: AbortSignal[] } {
  const signalsSeen: AbortSignal[] = [];
  const client = {
    async withAbortSignal<T>(signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
      signalsSeen.push(signal);
      signal.addEventListener('abort', () => undefined);
      return fn();
    },
  };
  return { handle: { client } as unknown as WorkflowHandle, signalsSeen };
}

test('a thousand calls under one signal leave no listener on it', async () => {
  const { handle } = handleLikeTemporals();
  const stop = new AbortController();
  for (let index = 0; index < 1_000; index++) {
    expect(await abortableCall(handle, stop.signal, async () => index)).toBe(index);
  }
  expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
});

test('aborting the signal cancels the call in flight, and a call made after it starts cancelled', async () => {
  const { handle, signalsSeen } = handleLikeTemporals();
  const stop = new AbortController();
  let release!: () => void;
  const inFlight = abortableCall(
    handle,
    stop.signal,
    () => new Promise<void>((resolve) => (release = resolve)),
  );
  stop.abort(new Error('gone'));
  expect(signalsSeen[0]!.aborted).toBe(true);
  expect(signalsSeen[0]!.reason).toEqual(new Error('gone'));
  release();
  await inFlight;
  await abortableCall(handle, stop.signal, async () => undefined);
  expect(signalsSeen[1]!.aborted).toBe(true);
});

test('without a signal the call is made as it is', async () => {
  const { handle, signalsSeen } = handleLikeTemporals();
  expect(await abortableCall(handle, undefined, async () => 'plain')).toBe('plain');
  expect(signalsSeen).toHaveLength(0);
});
