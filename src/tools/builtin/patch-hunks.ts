import { type Hunk, type HunkLine, PatchError } from './unified-diff';

/**
 * The text after applying `hunks` in order. A hunk's context and removed lines must match the file
 * exactly (a trailing carriage return aside); it is looked for at its stated line first, then at
 * the nearest position after the previous hunk, as `patch` does without fuzz. Lines the patch adds
 * take the file's line ending (CRLF files stay CRLF); `\ No newline at end of file` is honoured.
 */
export function applyHunks(original: string, hunks: Hunk[], file: string): string {
  const lines = original.split('\n');
  let endsWithNewline = original.endsWith('\n') || original === '';
  if (lines.at(-1) === '') lines.pop();
  const crlf = lines.length > 0 && lines.filter((line) => line.endsWith('\r')).length > lines.length / 2;

  let cursor = 0; // lines before this index are done: the next hunk may not go back there
  let shift = 0; // lines added minus lines removed so far, to map old line numbers into `lines`
  hunks.forEach((hunk, index) => {
    const name = `hunk ${index + 1} (${hunk.header}) of ${file}`;
    const oldSide = hunk.lines.filter((line) => line.kind !== '+');
    const newSide = hunk.lines.filter((line) => line.kind !== '-');
    let at: number;
    if (oldSide.length === 0) {
      // Pure insertion: `-N,0` means after old line N.
      at = hunk.oldStart + shift;
      if (at < cursor || at > lines.length) {
        throw new PatchError(`${name} inserts after line ${hunk.oldStart}, but that is not in the file`);
      }
    } else {
      const expected = hunk.oldStart - 1 + shift;
      const found = findBlock(lines, oldSide, expected, cursor);
      if (found === undefined)
        throw new PatchError(`${name} does not match the file: ${mismatch(lines, oldSide, expected)}`);
      at = found;
    }
    const touchesEnd = at + oldSide.length === lines.length;
    const replacement: string[] = [];
    let oldIndex = at;
    for (const line of hunk.lines) {
      if (line.kind === '+') replacement.push(withoutCr(line.text) + (crlf ? '\r' : ''));
      else if (line.kind === ' ')
        replacement.push(lines[oldIndex++]!); // context keeps the file's own bytes
      else oldIndex++;
    }
    lines.splice(at, oldSide.length, ...replacement);
    if (touchesEnd) {
      const last = newSide.at(-1);
      if (last) endsWithNewline = !last.noNewlineAtEnd;
      else if (lines.length > 0) endsWithNewline = true; // the line now last was followed by others
    }
    cursor = at + replacement.length;
    shift += replacement.length - oldSide.length;
  });

  if (lines.length === 0) return '';
  return lines.join('\n') + (endsWithNewline ? '\n' : '');
}

function findBlock(lines: string[], block: HunkLine[], expected: number, cursor: number): number | undefined {
  const matchesAt = (start: number) =>
    start >= cursor &&
    start + block.length <= lines.length &&
    block.every((line, k) => sameLine(lines[start + k]!, line));
  const reach = Math.max(lines.length, expected) + 1;
  for (let distance = 0; distance <= reach; distance++) {
    if (matchesAt(expected - distance)) return expected - distance;
    if (distance > 0 && matchesAt(expected + distance)) return expected + distance;
  }
  return undefined;
}

/** Where the block first differs from the file at its stated place, for the model to fix the hunk. */
function mismatch(lines: string[], block: HunkLine[], expected: number): string {
  const start = Math.max(0, Math.min(expected, lines.length));
  for (let k = 0; k < block.length; k++) {
    const actual = lines[start + k];
    if (actual === undefined) {
      return `its lines were not found anywhere; at line ${start + k + 1} the file ends, where the hunk expects ${JSON.stringify(block[k]!.text)}`;
    }
    if (!sameLine(actual, block[k]!)) {
      return `its lines were not found anywhere; at line ${start + k + 1} the hunk expects ${JSON.stringify(block[k]!.text)} but the file has ${JSON.stringify(withoutCr(actual))}`;
    }
  }
  return 'its lines were not found after the previous hunk';
}

function sameLine(fileLine: string, patchLine: HunkLine): boolean {
  return withoutCr(fileLine) === withoutCr(patchLine.text);
}

function withoutCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}
