/** A redirection of one simple command, e.g. `2>&1` (`fd` 2, `>&`, target `1`) or `< input.txt`. */
export interface Redirection {
  fd?: number;
  operator: '<' | '>' | '>>' | '>|' | '&>' | '&>>' | '>&' | '<&';
  target: string;
}

/** One program invocation: its words after quote removal, leading `NAME=value` assignments apart. */
export interface SimpleCommand {
  assignments: string[];
  words: string[];
  redirections: Redirection[];
}

export type ParsedCommandLine = { ok: true; commands: SimpleCommand[] } | { ok: false; reason: string };

/**
 * Splits a bash command line into its simple commands (joined by `|`, `|&`, `&&`, `||`, `;`, `&` or
 * newlines), with quotes removed, for checking what it would run. Only lines whose meaning does not
 * depend on anything but their text are accepted: any expansion (`$`, backquotes, globs, braces,
 * `~`), subshell, compound command, here-document or process substitution is refused with the
 * reason, since what it would run cannot be known before it runs.
 */
export function parseCommandLine(text: string): ParsedCommandLine {
  try {
    return { ok: true, commands: toCommands(tokenize(text)) };
  } catch (error) {
    if (error instanceof Unparseable) return { ok: false, reason: error.message };
    throw error;
  }
}

class Unparseable extends Error {}

type Separator = '|' | '|&' | '&&' | '||' | ';' | '&';
type Token =
  | { kind: 'word'; text: string; raw: string; quoted: boolean }
  | { kind: 'separator'; op: Separator }
  | { kind: 'redirect'; fd?: number; operator: Redirection['operator'] };

const PLAIN_WORD_CHAR = /[\p{L}\p{N}_\-.,/:=+%@^]/u;
const NOT_SUPPORTED: Record<string, string> = {
  $: 'variable, arithmetic and command expansion ($)',
  '`': 'command substitution (backquotes)',
  '*': 'glob patterns (*)',
  '?': 'glob patterns (?)',
  '[': 'glob patterns and tests ([)',
  ']': 'glob patterns and tests (])',
  '{': 'brace expansion and command groups ({)',
  '}': 'brace expansion and command groups (})',
  '~': 'tilde expansion (~)',
  '(': 'subshells and function definitions (()',
  ')': 'subshells and function definitions ())',
  '!': 'history expansion and negation (!)',
};

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let word = '';
  let raw = '';
  let quoted = false;
  let inWord = false;
  const endWord = () => {
    if (inWord) tokens.push({ kind: 'word', text: word, raw, quoted });
    word = '';
    raw = '';
    quoted = false;
    inWord = false;
  };
  const separator = (op: Separator) => {
    endWord();
    tokens.push({ kind: 'separator', op });
  };

  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    const next = text[i + 1];
    if (char === ' ' || char === '\t') {
      endWord();
    } else if (char === '\n') {
      separator(';');
    } else if (char === '\\') {
      if (next === undefined) throw new Unparseable('the command ends with a lone backslash');
      i++;
      if (next === '\n') continue; // a line continuation
      assertPrintable(next);
      word += next;
      raw += char + next;
      quoted = true;
      inWord = true;
    } else if (char === "'") {
      const end = text.indexOf("'", i + 1);
      if (end === -1) throw new Unparseable('a single quote is not closed');
      const inside = text.slice(i + 1, end);
      for (const c of inside) if (c !== '\n') assertPrintable(c);
      word += inside;
      raw += text.slice(i, end + 1);
      quoted = true;
      inWord = true;
      i = end;
    } else if (char === '"') {
      const start = i;
      i++;
      for (; i < text.length && text[i] !== '"'; i++) {
        const c = text[i]!;
        if (c === '$' || c === '`')
          throw new Unparseable(`not supported: ${NOT_SUPPORTED[c]} inside double quotes`);
        if (c === '\\') {
          const escaped = text[i + 1];
          if (escaped === undefined) break;
          i++;
          if (escaped === '\n') continue;
          // Inside double quotes a backslash only escapes these; before anything else it is kept.
          if (!['"', '\\', '$', '`'].includes(escaped)) word += '\\';
          assertPrintable(escaped);
          word += escaped;
          continue;
        }
        if (c !== '\n') assertPrintable(c);
        word += c;
      }
      if (i >= text.length) throw new Unparseable('a double quote is not closed');
      raw += text.slice(start, i + 1);
      quoted = true;
      inWord = true;
    } else if (char === '#' && !inWord) {
      const end = text.indexOf('\n', i);
      i = (end === -1 ? text.length : end) - 1; // a comment, up to the newline
    } else if (char === '|') {
      if (next === '|') i++;
      else if (next === '&') i++;
      separator(next === '|' ? '||' : next === '&' ? '|&' : '|');
    } else if (char === '&') {
      if (next === '&') {
        i++;
        separator('&&');
      } else if (next === '>') {
        endWord();
        const append = text[i + 2] === '>';
        i += append ? 2 : 1;
        tokens.push({ kind: 'redirect', operator: append ? '&>>' : '&>' });
      } else {
        separator('&');
      }
    } else if (char === ';') {
      if (next === ';') throw new Unparseable('case clauses (;;) are not supported');
      separator(';');
    } else if (char === '<' || char === '>') {
      const fd = inWord && !quoted && /^\d+$/.test(word) ? Number(word) : undefined;
      if (fd !== undefined) {
        word = '';
        raw = '';
        inWord = false;
      }
      endWord();
      const { operator, length } = redirectOperator(char, next);
      i += length - 1;
      tokens.push({ kind: 'redirect', ...(fd !== undefined ? { fd } : {}), operator });
    } else if (NOT_SUPPORTED[char]) {
      throw new Unparseable(`not supported: ${NOT_SUPPORTED[char]}`);
    } else if (PLAIN_WORD_CHAR.test(char)) {
      word += char;
      raw += char;
      inWord = true;
    } else {
      throw new Unparseable(`the character ${JSON.stringify(char)} is not supported outside quotes`);
    }
  }
  endWord();
  return tokens;
}

function redirectOperator(
  char: '<' | '>',
  next: string | undefined,
): { operator: Redirection['operator']; length: number } {
  if (next === '(') throw new Unparseable('process substitution is not supported');
  if (char === '<') {
    if (next === '<') throw new Unparseable('here-documents and here-strings (<<) are not supported');
    if (next === '>') throw new Unparseable('read-write redirection (<>) is not supported');
    if (next === '&') return { operator: '<&', length: 2 };
    return { operator: '<', length: 1 };
  }
  if (next === '>') return { operator: '>>', length: 2 };
  if (next === '|') return { operator: '>|', length: 2 };
  if (next === '&') return { operator: '>&', length: 2 };
  return { operator: '>', length: 1 };
}

function assertPrintable(char: string): void {
  if (/[\p{Cc}\p{Cf}]/u.test(char) && char !== '\t') {
    throw new Unparseable(`control character U+${char.codePointAt(0)!.toString(16).padStart(4, '0')}`);
  }
}

const RESERVED_WORDS = new Set([
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'case',
  'esac',
  'for',
  'select',
  'while',
  'until',
  'do',
  'done',
  'in',
  'function',
  'time',
  'coproc',
]);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=/;

function toCommands(tokens: Token[]): SimpleCommand[] {
  const commands: SimpleCommand[] = [];
  let current: SimpleCommand = { assignments: [], words: [], redirections: [] };
  let lastSeparator: Separator | undefined;
  const isEmpty = (command: SimpleCommand) =>
    command.words.length === 0 && command.assignments.length === 0 && command.redirections.length === 0;

  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    if (token.kind === 'separator') {
      if (isEmpty(current)) {
        // Blank lines and a `;` or `&` after a command are fine; `| x`, `a || || b` are not.
        const afterNothing = lastSeparator === undefined && commands.length === 0;
        if (token.op === ';' && (afterNothing || lastSeparator === ';' || lastSeparator === '&')) continue;
        throw new Unparseable(`nothing before ${token.op}`);
      }
      commands.push(current);
      current = { assignments: [], words: [], redirections: [] };
      lastSeparator = token.op;
      continue;
    }
    if (token.kind === 'redirect') {
      const target = tokens[i + 1];
      if (target?.kind !== 'word') throw new Unparseable(`${token.operator} has no target`);
      i++;
      current.redirections.push({
        ...(token.fd !== undefined ? { fd: token.fd } : {}),
        operator: token.operator,
        target: target.text,
      });
      continue;
    }
    if (current.words.length === 0) {
      if (ASSIGNMENT.test(token.raw)) {
        current.assignments.push(token.text);
        continue;
      }
      if (!token.quoted && RESERVED_WORDS.has(token.text)) {
        throw new Unparseable(`compound commands (${token.text}) are not supported`);
      }
    }
    current.words.push(token.text);
  }
  if (!isEmpty(current)) commands.push(current);
  else if (lastSeparator !== undefined && lastSeparator !== ';' && lastSeparator !== '&') {
    throw new Unparseable(`nothing after ${lastSeparator}`);
  }
  return commands;
}
