import type { UserMessageInput } from './conversation-api';
import { sha256Hex } from './sha256';

/** How much of each long string's head and tail the fingerprint reads. */
const SAMPLE_CHARS = 16_384;

/**
 * What tells a retried message from another message sent under the same id: a SHA-256 over its
 * text, its sender and its images. The conversation computes it for every message it takes, in
 * workflow code where SHA-256 is plain JavaScript (about 5 ms a 32 KiB), so a long text or an image
 * counts by its length, its head and its tail rather than whole: two messages that differ only
 * in the middle of a megabyte are taken for the same one, which a client reusing an id for new
 * content would have to contrive.
 */
export function messageFingerprint(message: Pick<UserMessageInput, 'text' | 'sender' | 'images'>): string {
  const parts = [
    sampled(message.text),
    message.sender ?? '',
    ...(message.images ?? []).map((image) => `${image.mimeType}\n${sampled(image.data)}`),
  ];
  return sha256Hex(JSON.stringify(parts));
}

function sampled(text: string): string {
  if (text.length <= 2 * SAMPLE_CHARS) return text;
  return `${text.length}\n${text.slice(0, SAMPLE_CHARS)}\n${text.slice(-SAMPLE_CHARS)}`;
}
