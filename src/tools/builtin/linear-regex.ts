import { RE2JS } from 're2js';
import { ToolError } from '../tool-error';

/**
 * A model's regular expression, compiled for RE2 (re2js): matching takes time proportional to the
 * text's length times the compiled program's size, never exponential, so no pattern can stall the
 * worker's one thread the way a backtracking engine does on `(a+)+$`. The price is RE2's syntax:
 * no backreferences, no lookahead or lookbehind. JavaScript spellings RE2 lacks (`\uXXXX`,
 * `(?<name>…)`, `\cA`) are translated first.
 */
export interface LinearRegex {
  /** Whether the pattern matches anywhere in `text`. */
  test(text: string): boolean;
  /** Compiled program size: the cost of matching one character, in the worst case. */
  readonly instructions: number;
}

/** Beyond this a pattern is refused: one long line would take too long to match synchronously. */
export const MAX_PATTERN_INSTRUCTIONS = 4_000;

export function compileLinearRegex(pattern: string, ignoreCase: boolean): LinearRegex {
  // Checked before translating: the translation turns `\k<name>` into the letter k.
  if (hasBackreference(pattern)) throw new ToolError('InvalidArgs', BACKREFERENCES);
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(RE2JS.translateRegExp(pattern), ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (error) {
    throw new ToolError('InvalidArgs', unsupportedSyntax(pattern, (error as Error).message));
  }
  const instructions = programSize(compiled);
  if (instructions > MAX_PATTERN_INSTRUCTIONS) {
    throw new ToolError(
      'InvalidArgs',
      `the regular expression is too complex (it compiles to ${instructions} steps; the limit is ${MAX_PATTERN_INSTRUCTIONS}): use smaller repeat counts or fewer alternatives, or search in several calls`,
    );
  }
  return { test: (text) => compiled.test(text), instructions };
}

const ENGINE = 'grep uses the RE2 engine (linear time, RE2 syntax)';
const BACKREFERENCES = `backreferences (\\1, \\k<name>) are not supported: ${ENGINE}; search for the text itself`;

/** An unescaped `\1`…`\9` or `\k<`: escapes are skipped in pairs, so `\\1` (a backslash, then 1) is not one. */
function hasBackreference(pattern: string): boolean {
  for (let index = 0; index < pattern.length; index++) {
    if (pattern[index] !== '\\') continue;
    const next = pattern[index + 1] ?? '';
    if (/[1-9]/.test(next) || (next === 'k' && pattern[index + 2] === '<')) return true;
    index++;
  }
  return false;
}

function unsupportedSyntax(pattern: string, reason: string): string {
  if (/\(\?<?[=!]/.test(pattern))
    return `lookahead and lookbehind ((?=…), (?!…), (?<=…), (?<!…)) are not supported: ${ENGINE}; match the surrounding text instead`;
  return `invalid regular expression: ${reason.replace(/^error parsing regexp: /, '')}; ${ENGINE}, with no backreferences or lookaround, repeat counts up to 1000`;
}

/** re2js keeps the program's size internal; a missing size counts as the largest allowed. */
function programSize(compiled: RE2JS): number {
  const prog = (compiled.re2() as { prog?: { numInst?: () => number } }).prog;
  return prog?.numInst?.() ?? MAX_PATTERN_INSTRUCTIONS;
}
