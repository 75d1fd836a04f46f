import { oneLine } from '../shared/one-line';
import { printable } from '../shared/printable-text';
import { cutUtf8 } from '../tools/truncate';

/** Text a remote wrote, as it may be shown in a line: printable, on one line, at most `max` characters. */
export function inertLine(text: string, max: number): string {
  return oneLine(printable(text), max);
}

/**
 * Text a remote wrote, as a tool result or a terminal may carry it: no control characters or escape
 * sequences (newlines and tabs stay), at most `maxBytes` of UTF-8, with a note when it was cut.
 */
export function inertText(text: string, maxBytes: number): string {
  const clean = printable(text);
  if (Buffer.byteLength(clean) <= maxBytes) return clean;
  return `${cutUtf8(clean, maxBytes)}\n…[cut: the remote agent sent more than ${maxBytes} bytes]`;
}
