import type { ModelTextDelta } from './live-model-text';
import {
  type LiveEndpointAddress,
  LiveEndpointTrustError,
  requestLiveEndpoint,
} from './live-endpoint-request';

/** Beyond this, an event with no end is not the endpoint's: the watcher stops reading. */
const MAX_EVENT_CHARS = 4 * 1024 * 1024;

/** The endpoints this process has warned of, so a refused one is told once, not at every call. */
const warnedOf = new Set<string>();

/**
 * Reads a running model call's text from the push endpoint of the worker running it (the URL its
 * heartbeat details name, and the pin of the certificate it serves when it made its own): the text
 * so far, then each piece as it arrives, until the call ends or `stop` is called. Each piece goes
 * to `onDelta` as `call` (the key this watcher made). Quiet on any failure (heartbeats still bring
 * the text, only later), except that an endpoint that is not who the heartbeat said is refused with
 * a process warning, once per endpoint: a man in the middle, or a proxy that should not be there.
 */
export function followRemoteModelText(
  endpoint: LiveEndpointAddress,
  call: string,
  conversationId: string,
  onDelta: (delta: ModelTextDelta) => void,
): { stop(): void } {
  const controller = new AbortController();
  if (!/^https?:\/\//.test(endpoint.url)) return { stop: () => undefined };
  void (async () => {
    const response = await requestLiveEndpoint(endpoint, { method: 'GET', signal: controller.signal });
    if (response.statusCode !== 200) return;
    const decoder = new TextDecoder();
    let buffered = '';
    for await (const chunk of response as AsyncIterable<Uint8Array>) {
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
      if (buffered.length > MAX_EVENT_CHARS) return;
    }
  })()
    .catch((error: unknown) => {
      // The URL's authority, read without a parser that could throw here.
      const where = /^https?:\/\/([^/]*)/.exec(endpoint.url)?.[1] ?? endpoint.url;
      if (!(error instanceof LiveEndpointTrustError) || warnedOf.has(where)) return;
      warnedOf.add(where);
      process.emitWarning(
        `${error.message}: its model text is not read; heartbeats bring it`,
        'LiveEndpointTrust',
      );
    })
    .finally(() => controller.abort());
  return { stop: () => controller.abort() };
}
