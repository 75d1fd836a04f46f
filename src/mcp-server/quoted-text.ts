import { oneLine } from '../shared/one-line';
import { printable, withUnprintableShown } from '../shared/printable-text';

/**
 * Text a model, a tool or a caller wrote, as MCP results, progress and questions carry it to another
 * model and to a person: data, never instructions or markup. Quoted in a Markdown code fence longer
 * than any run of backticks inside it, so nothing it contains can close the fence and be read as
 * Markdown (a link, an image that loads, a heading) or as the server's own words; without what a
 * terminal would act on. Structured content carries the same text as it was, in JSON strings.
 */
export function fenced(text: string, { showUnprintable = false } = {}): string {
  const shown = showUnprintable ? withUnprintableShown(text) : printable(text);
  const longestRun = Math.max(0, ...[...shown.matchAll(/`+/g)].map(([run]) => run.length));
  const fence = '`'.repeat(Math.max(3, longestRun + 1));
  return `${fence}text\n${shown}\n${fence}`;
}

/** Text on one printable line of at most `max` characters: for progress messages and titles. */
export function line(text: string, max: number): string {
  return oneLine(printable(text), max);
}

/** The end of `text` on one printable line, at most `max` characters: what a progress message shows of streaming text. */
export function tail(text: string, max: number): string {
  const flat = printable(text).replace(/\s+/g, ' ').trim();
  return flat.length > max ? `…${flat.slice(flat.length - max + 1)}` : flat;
}
