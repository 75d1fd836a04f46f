import type { Payload, PayloadCodec } from '@temporalio/common';

/**
 * A payload codec for bench 8's "workflow task" case: decoding a payload that names this process
 * (`"stallTaskOf": <pid>` in a bench directive) stalls for a minute, so the workflow task that
 * delivers that message is in flight on this worker when the bench kills it. Any other worker
 * decodes it at once: the stall is the victim's alone, and the replay that recovers is not slowed.
 */
export function stallingCodec(): PayloadCodec {
  const marker = new RegExp(`stallTaskOf\\\\?"\\s*:\\s*${process.pid}\\b`);
  const decoder = new TextDecoder();
  return {
    encode: async (payloads: Payload[]) => payloads,
    async decode(payloads: Payload[]) {
      if (payloads.some((payload) => payload.data && marker.test(decoder.decode(payload.data)))) {
        await new Promise((resolve) => setTimeout(resolve, 60_000));
      }
      return payloads;
    },
  };
}
