import { InvalidInputError } from './conversation-errors';

const MAX_SESSION_ID_BYTES = 256;

/**
 * Session id validation, for any id that may name something on disk or be
 * passed on: why `id` is unsafe, or undefined. Refused: empty, path traversal (`..`), directory
 * separators, NUL and other control characters, more than 256 bytes (UTF-8).
 */
export function sessionIdProblem(id: string): string | undefined {
  if (id === '') return 'it is empty';
  if (new TextEncoder().encode(id).length > MAX_SESSION_ID_BYTES)
    return `it is over ${MAX_SESSION_ID_BYTES} bytes`;
  if (id.includes('\0')) return 'it contains a NUL byte';
  if (/[\p{Cc}]/u.test(id)) return 'it contains a control character';
  if (/[/\\]/.test(id)) return 'it contains a directory separator';
  if (id.includes('..')) return "it contains '..'";
  return undefined;
}

/**
 * Conversation ids become workflow ids: printable, no whitespace, bounded, and safe as session ids
 * (`sessionIdProblem`), so an id can never traverse a path, whatever later uses it. Refused: InvalidInputError.
 */
export function assertConversationId(id: string): string {
  const problem = sessionIdProblem(id);
  const what = `conversation id ${JSON.stringify(id)}`;
  if (problem !== undefined) throw new InvalidInputError(what, [problem]);
  if (!/^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$/.test(id)) {
    throw new InvalidInputError(what, [
      "use 1-200 letters, digits, '.', '_', ':' or '-', starting with a letter or digit",
    ]);
  }
  return id;
}
