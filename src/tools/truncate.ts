import type { ToolResultContent } from '../shared/content';
import type { ToolResult } from './tool';

/**
 * Type-aware truncation of tool-call-lifecycle.md: strings get a suffix saying what was cut,
 * arrays keep their leading elements plus a sentinel, objects are wrapped in `_truncated_json`.
 */
export function truncateText(text: string, maxBytes: number): string {
  const total = Buffer.byteLength(text);
  if (total <= maxBytes) return text;
  const suffix = (omitted: number) => `\n…[truncated: ${omitted} of ${total} bytes omitted]`;
  const keep = Math.max(0, maxBytes - Buffer.byteLength(suffix(total)));
  const kept = cutUtf8(text, keep);
  return kept + suffix(total - Buffer.byteLength(kept));
}

export function truncateJson(value: unknown, maxBytes: number): unknown {
  if (value === undefined) return undefined;
  const serialized = JSON.stringify(value) ?? 'null';
  if (Buffer.byteLength(serialized) <= maxBytes) return value;
  if (typeof value === 'string') return truncateText(value, maxBytes);
  if (Array.isArray(value)) {
    const kept: unknown[] = [];
    let used = 2 + 60; // brackets and the sentinel
    for (const element of value) {
      const size = Buffer.byteLength(JSON.stringify(element) ?? 'null') + 1;
      if (used + size > maxBytes) break;
      kept.push(element);
      used += size;
    }
    return [...kept, { _truncated: true, omittedElements: value.length - kept.length }];
  }
  return {
    _truncated_json: cutUtf8(serialized, Math.max(0, maxBytes - 60)),
    originalBytes: Buffer.byteLength(serialized),
  };
}

/** Cuts a result's content to `maxBytes` in total, keeping at least one block; details are bounded the same way. */
export function truncateToolResult(result: ToolResult, maxBytes: number): ToolResult {
  let budget = maxBytes;
  const content: ToolResultContent[] = [];
  for (const block of result.content) {
    if (block.type === 'text') {
      const text = truncateText(block.text, Math.max(budget, 0));
      budget -= Buffer.byteLength(text);
      content.push({ type: 'text', text });
    } else if (block.data.length <= budget) {
      budget -= block.data.length;
      content.push(block);
    } else {
      const note = `[image omitted: ${block.data.length} bytes of ${block.mimeType} exceed the ${maxBytes}-byte result limit]`;
      budget -= note.length;
      content.push({ type: 'text', text: note });
    }
  }
  return { content, details: truncateJson(result.details, maxBytes) };
}

function cutUtf8(text: string, maxBytes: number): string {
  const bytes = Buffer.from(text);
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  // Step back to the start of a UTF-8 sequence so no character is split.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}
