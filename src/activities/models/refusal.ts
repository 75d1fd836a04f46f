import { printable } from '../../shared/printable-text';

/** The most of a provider's refusal kept: enough for an explanation, not for a payload. */
export const MAX_REFUSAL_CHARS = 2_000;

/**
 * A provider's explanation of a refusal as the transcript keeps it: text from outside, so bounded
 * and stripped of what a terminal would act on; undefined when nothing is left of it.
 */
export function refusalWords(raw: string | null | undefined): string | undefined {
  const words = printable(raw ?? '').trim();
  if (!words) return undefined;
  return words.length > MAX_REFUSAL_CHARS ? `${words.slice(0, MAX_REFUSAL_CHARS)}…` : words;
}
