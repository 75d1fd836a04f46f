import type { ToolResultContent } from '../shared/content';
import { withoutEscapeSequences } from '../shared/printable-text';
import type { ToolOutcome } from '../shared/tool-outcome';

/* eslint-disable no-control-regex -- matching control characters is the point here */
/** ASCII control characters except tab, newline and carriage return; and DEL. */
const CONTROL_CHARACTERS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;
/* eslint-enable no-control-regex */

/**
 * Content sanitisation: NUL, DEL and ASCII control characters are
 * stripped, newline, carriage return and tab kept. Applied to tool output before it enters the
 * transcript, where a stray NUL or escape sequence would reach the model and every reader.
 */
export function sanitizeText(text: string): string {
  return withoutEscapeSequences(text).replace(CONTROL_CHARACTERS, '');
}

/** Text blocks sanitised; images untouched (they are base64). */
export function sanitizeTextContent(content: ToolResultContent[]): ToolResultContent[] {
  return content.map((block) =>
    block.type === 'text' ? { ...block, text: sanitizeText(block.text) } : block,
  );
}

/** The outcome with its text sanitised, its reason too: what the runTool activity hands to the transcript. */
export function sanitizeOutcomeText(outcome: ToolOutcome): ToolOutcome {
  return {
    ...outcome,
    content: sanitizeTextContent(outcome.content),
    ...(outcome.reason !== undefined ? { reason: sanitizeText(outcome.reason) } : {}),
  };
}
