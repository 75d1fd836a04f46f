import type { ModelTextDelta } from './live-model-text';

/**
 * Reads a running model call's text from the push endpoint of the worker running it (the URL its
 * heartbeat details name): the text so far, then each piece as it arrives, until the call ends or
 * `stop` is called. Each piece goes to `onDelta` as `call` (the key this watcher made). Quiet on any
 * failure: heartbeats still bring the text, only later.
 */
export function followRemoteModelText(
  url: string,
  call: string,
  conversationId: string,
  onDelta: (delta: ModelTextDelta) => void,
): { stop(): void } {
  const controller = new AbortController();
  if (!/^https?:\/\//.test(url)) return { stop: () => undefined };
  void (async () => {
    const response = await fetch(url, { signal: controller.signal, redirect: 'error' });
    if (!response.ok || !response.body) return;
    const decoder = new TextDecoder();
    let buffered = '';
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffered.indexOf('\n\n')) >= 0) {
        const event = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (event.startsWith('event: end')) return;
        if (!event.startsWith('data: ')) continue;
        const delta = JSON.parse(event.slice('data: '.length)) as Partial<ModelTextDelta>;
        if (typeof delta.offset !== 'number' || typeof delta.text !== 'string') continue;
        onDelta({ conversationId, call, offset: delta.offset, text: delta.text });
      }
    }
  })()
    .catch(() => undefined)
    .finally(() => controller.abort());
  return { stop: () => controller.abort() };
}
