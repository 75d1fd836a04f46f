/** A patch that cannot be read, or does not fit the files it names; the message says where. */
export class PatchError extends Error {}

export interface HunkLine {
  kind: ' ' | '-' | '+';
  text: string;
  /** `\ No newline at end of file` followed this line: on the old side, the new side, or both (context). */
  noNewlineAtEnd?: boolean;
}

export interface Hunk {
  /** The `@@ -a,b +c,d @@` line, for messages. */
  header: string;
  oldStart: number;
  oldCount: number;
  newStart: number;
  lines: HunkLine[];
}

export interface FilePatch {
  kind: 'add' | 'delete' | 'update';
  /** As written in the patch, `a/` and `b/` prefixes removed. */
  path: string;
  hunks: Hunk[];
}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/**
 * Reads a multi-file unified diff (`diff -u`, `git diff`): files added (`--- /dev/null`), deleted
 * (`+++ /dev/null`) and changed, each with hunks whose line counts are checked. Text before, between
 * and after files is ignored. Renames, copies, mode changes and binary patches are refused.
 */
export function parseUnifiedDiff(patch: string): FilePatch[] {
  const lines = patch.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const files: FilePatch[] = [];
  let gitHeader: { newFile: boolean; deletedFile: boolean; paths: [string, string] | undefined } | undefined;
  const flushGitHeaderWithoutHunks = () => {
    // `git diff` writes an empty file added or deleted as a header with no ---/+++ lines.
    if (!gitHeader?.paths) return;
    const [oldPath, newPath] = gitHeader.paths;
    if (gitHeader.newFile) files.push({ kind: 'add', path: stripPrefix(newPath, 'b/'), hunks: [] });
    else if (gitHeader.deletedFile)
      files.push({ kind: 'delete', path: stripPrefix(oldPath, 'a/'), hunks: [] });
    else throw new PatchError(`mode-only changes are not supported (${newPath})`);
  };

  for (let i = 0; i < lines.length; i++) {
    const line = withoutCr(lines[i]!);
    if (line.startsWith('diff --git ')) {
      flushGitHeaderWithoutHunks();
      gitHeader = { newFile: false, deletedFile: false, paths: gitPaths(line.slice('diff --git '.length)) };
      continue;
    }
    if (gitHeader) {
      if (line.startsWith('new file mode')) gitHeader.newFile = true;
      else if (line.startsWith('deleted file mode')) gitHeader.deletedFile = true;
      else if (/^(rename|copy) (from|to) /.test(line))
        throw new PatchError(`renames and copies are not supported: ${line}`);
      else if (line.startsWith('GIT binary patch') || line.startsWith('Binary files '))
        throw new PatchError('binary patches are not supported');
    }
    if (!line.startsWith('--- ') || !withoutCr(lines[i + 1] ?? '').startsWith('+++ ')) continue;

    const oldPath = pathOf(line.slice(4));
    const newPath = pathOf(withoutCr(lines[i + 1]!).slice(4));
    gitHeader = undefined;
    i += 2;
    const hunks: Hunk[] = [];
    while (i < lines.length && withoutCr(lines[i]!).startsWith('@@')) {
      const { hunk, next } = readHunk(lines, i, newPath ?? oldPath ?? '?');
      hunks.push(hunk);
      i = next;
    }
    i--; // the loop's i++ moves to the line after the last hunk
    files.push(filePatch(oldPath, newPath, hunks));
  }
  flushGitHeaderWithoutHunks();
  if (files.length === 0) {
    throw new PatchError(
      'no file in the patch: expected unified diff headers (--- a/path, +++ b/path) and @@ hunks',
    );
  }
  return files;
}

function filePatch(oldPath: string | null, newPath: string | null, hunks: Hunk[]): FilePatch {
  if (oldPath === null && newPath === null) throw new PatchError('a file goes from /dev/null to /dev/null');
  const gitStyle =
    (oldPath === null || oldPath.startsWith('a/')) && (newPath === null || newPath.startsWith('b/'));
  const strip = (path: string, prefix: string) => (gitStyle ? stripPrefix(path, prefix) : path);
  if (oldPath === null) {
    const path = strip(newPath!, 'b/');
    if (hunks.some((hunk) => hunk.lines.some((line) => line.kind !== '+')))
      throw new PatchError(`${path} is added, but its hunks have context or removed lines`);
    return { kind: 'add', path, hunks };
  }
  if (newPath === null) {
    const path = strip(oldPath, 'a/');
    if (hunks.some((hunk) => hunk.lines.some((line) => line.kind !== '-')))
      throw new PatchError(`${path} is deleted, but its hunks have context or added lines`);
    return { kind: 'delete', path, hunks };
  }
  const from = strip(oldPath, 'a/');
  const path = strip(newPath, 'b/');
  if (from !== path)
    throw new PatchError(`renames are not supported (${from} to ${path}): delete and add instead`);
  if (hunks.length === 0) throw new PatchError(`${path} has no hunks`);
  return { kind: 'update', path, hunks };
}

function readHunk(lines: string[], start: number, file: string): { hunk: Hunk; next: number } {
  const header = withoutCr(lines[start]!);
  const match = HUNK_HEADER.exec(header);
  if (!match) throw new PatchError(`malformed hunk header in ${file}: ${header}`);
  const oldCount = match[2] === undefined ? 1 : Number(match[2]);
  const newCount = match[4] === undefined ? 1 : Number(match[4]);
  const hunk: Hunk = {
    header: header.slice(0, match[0].length),
    oldStart: Number(match[1]),
    oldCount,
    newStart: Number(match[3]),
    lines: [],
  };
  let oldLeft = oldCount;
  let newLeft = newCount;
  let i = start + 1;
  const markEnd = () => {
    const last = hunk.lines.at(-1);
    if (!last)
      throw new PatchError(`"\\ No newline at end of file" before any line in ${file} ${hunk.header}`);
    last.noNewlineAtEnd = true;
  };
  while (oldLeft > 0 || newLeft > 0) {
    const line = lines[i];
    if (line === undefined) {
      throw new PatchError(
        `${file} ${hunk.header}: the patch ends with ${oldLeft} old and ${newLeft} new lines of the hunk missing (check its line counts)`,
      );
    }
    i++;
    // An empty line is an empty context line whose leading space an editor removed.
    const kind = line === '' || line === '\r' ? ' ' : line[0];
    const text = line.slice(1);
    if (kind === '\\') {
      markEnd();
      continue;
    }
    if (kind === ' ') {
      oldLeft--;
      newLeft--;
    } else if (kind === '-') oldLeft--;
    else if (kind === '+') newLeft--;
    else {
      throw new PatchError(
        `${file} ${hunk.header}: line ${JSON.stringify(line.slice(0, 80))} is not a hunk line (' ', '-', '+'); are the hunk's line counts right?`,
      );
    }
    if (oldLeft < 0 || newLeft < 0) {
      throw new PatchError(`${file} ${hunk.header}: the hunk has more lines than its header counts`);
    }
    hunk.lines.push({ kind, text });
  }
  if (lines[i]?.startsWith('\\')) {
    markEnd();
    i++;
  }
  return { hunk, next: i };
}

/** `/dev/null` is null; a tab and what follows (a timestamp) is dropped; simple quoted names are unquoted. */
function pathOf(raw: string): string | null {
  let path = raw.split('\t')[0]!.trimEnd();
  if (path.startsWith('"') && path.endsWith('"') && path.length >= 2) {
    if (path.includes('\\')) throw new PatchError(`quoted paths with escapes are not supported: ${path}`);
    path = path.slice(1, -1);
  }
  if (path === '/dev/null') return null;
  if (path === '') throw new PatchError('a file header has no path');
  return path;
}

function gitPaths(rest: string): [string, string] | undefined {
  const match = /^(a\/.+) (b\/.+)$/.exec(rest);
  return match ? [match[1]!, match[2]!] : undefined;
}

function stripPrefix(path: string, prefix: string): string {
  return path.startsWith(prefix) ? path.slice(prefix.length) : path;
}

function withoutCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}
