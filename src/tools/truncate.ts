import type { ToolResultContent } from '../shared/content';
import type { ToolResult } from './tool';

/**
 * Type-aware truncation: strings get a suffix saying what was cut,
 * arrays keep their leading elements plus a sentinel, objects are wrapped in `_truncated_json`.
 * Text stays within `maxBytes` bytes of UTF-8; arrays and objects within `maxBytes` bytes of JSON.
 */
export function truncateText(text: string, maxBytes: number): string {
  const total = Buffer.byteLength(text);
  if (total <= maxBytes) return text;
  const suffix = (omitted: number) => `\n…[truncated: ${omitted} of ${total} bytes omitted]`;
  const room = maxBytes - Buffer.byteLength(suffix(total));
  if (room < 0) return cutUtf8(text, Math.max(0, maxBytes));
  const kept = cutUtf8(text, room);
  return kept + suffix(total - Buffer.byteLength(kept));
}

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? 'null');

export function truncateJson(value: unknown, maxBytes: number): unknown {
  if (value === undefined) return undefined;
  if (jsonBytes(value) <= maxBytes) return value;
  if (typeof value === 'string') return truncateText(value, maxBytes);
  if (Array.isArray(value)) {
    const kept: unknown[] = [];
    let used = jsonBytes([{ _truncated: true, omittedElements: value.length }]);
    for (const element of value) {
      const size = jsonBytes(element) + 1;
      if (used + size > maxBytes) break;
      kept.push(element);
      used += size;
    }
    return [...kept, { _truncated: true, omittedElements: value.length - kept.length }];
  }
  const serialized = JSON.stringify(value);
  const originalBytes = Buffer.byteLength(serialized);
  // Embedding JSON in a string escapes its quotes, so shrink until the envelope itself fits.
  let keep = maxBytes;
  for (;;) {
    const envelope = { _truncated_json: cutUtf8(serialized, Math.max(0, keep)), originalBytes };
    const size = jsonBytes(envelope);
    if (size <= maxBytes || keep <= 0) return envelope;
    keep -= size - maxBytes;
  }
}

/** Cuts a result's content to `maxBytes` in total, keeping at least one block; details are bounded the same way. */
export function truncateToolResult(result: ToolResult, maxBytes: number): ToolResult {
  let budget = maxBytes;
  const content: ToolResultContent[] = [];
  for (const block of result.content) {
    if (budget <= 0) break;
    if (block.type === 'text') {
      const text = truncateText(block.text, budget);
      budget -= Buffer.byteLength(text);
      content.push({ type: 'text', text });
    } else if (block.data.length <= budget) {
      budget -= block.data.length;
      content.push(block);
    } else {
      const note = truncateText(
        `[image omitted: ${block.data.length} bytes of ${block.mimeType} exceed the ${maxBytes}-byte result limit]`,
        budget,
      );
      budget -= Buffer.byteLength(note);
      content.push({ type: 'text', text: note });
    }
  }
  if (content.length === 0) content.push({ type: 'text', text: '' });
  return { content, details: truncateJson(result.details, maxBytes) };
}

/** The longest prefix of `text` that is at most `maxBytes` of UTF-8, never splitting a character. */
export function cutUtf8(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text);
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}
