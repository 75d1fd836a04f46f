import * as fs from 'node:fs/promises';
import { chmod, mkdir, readFile, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { applyPatchTool, createApplyPatchTool } from '../../src/tools/builtin/apply-patch';
import {
  type FileOps,
  FileChangesFailed,
  commitFileChanges,
} from '../../src/tools/builtin/atomic-file-changes';
import { HeldDirectory } from '../../src/tools/held-directory';
import { applyHunks } from '../../src/tools/builtin/patch-hunks';
import { PatchError, parseUnifiedDiff } from '../../src/tools/builtin/unified-diff';
import { Workspace } from '../../src/tools/workspace';
import { makeTempDir, removeDir, resultText, runTool, toolErrorOf } from './tool-harness';

let root: string;
let workspace: Workspace;

beforeEach(async () => {
  root = await makeTempDir('durable-agent-unit-patch-');
  workspace = new Workspace(root);
});

afterEach(async () => {
  await removeDir(root);
});

const lines = (...text: string[]) => text.join('\n') + '\n';
/** Where a change to `relative` lands: its deepest existing directory, open, and what is missing below it. */
async function targetOf(relative: string) {
  const parts = relative.split('/');
  const name = parts.pop()!;
  const parents: string[] = [];
  while (
    parts.length > 0 &&
    !(await fs.stat(path.join(root, ...parts)).then(
      () => true,
      () => false,
    ))
  )
    parents.unshift(parts.pop()!);
  const dir = await HeldDirectory.open(path.join(root, ...parts));
  opened.push(dir);
  return { dir, parents, name, shown: relative };
}
const opened: HeldDirectory[] = [];
afterEach(async () => {
  for (const dir of opened.splice(0)) await dir.close();
});
const read = (name: string) => readFile(path.join(root, name), 'utf8');
/** Every file under the workspace, so leftovers (temporary files, backups) show up. */
async function allFiles(dir = root): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) =>
      entry.isDirectory()
        ? allFiles(path.join(dir, entry.name))
        : [path.relative(root, path.join(dir, entry.name))],
    ),
  );
  return nested.flat().sort();
}

/** A change to a.txt, a new b/new.txt, and c.txt deleted: one patch touching three files three ways. */
const THREE_WAY_PATCH = lines(
  'diff --git a/a.txt b/a.txt',
  'index 1111111..2222222 100644',
  '--- a/a.txt',
  '+++ b/a.txt',
  '@@ -1,3 +1,3 @@',
  ' one',
  '-two',
  '+TWO',
  ' three',
  'diff --git a/b/new.txt b/b/new.txt',
  'new file mode 100644',
  '--- /dev/null',
  '+++ b/b/new.txt',
  '@@ -0,0 +1,2 @@',
  '+hello',
  '+world',
  'diff --git a/c.txt b/c.txt',
  'deleted file mode 100644',
  '--- a/c.txt',
  '+++ /dev/null',
  '@@ -1 +0,0 @@',
  '-bye',
);

async function writeThreeWayFiles(): Promise<void> {
  await writeFile(path.join(root, 'a.txt'), lines('one', 'two', 'three'));
  await writeFile(path.join(root, 'c.txt'), lines('bye'));
}

describe('parsing unified diffs', () => {
  test('reads added, deleted and changed files of a git diff, a/ and b/ removed', () => {
    const files = parseUnifiedDiff(THREE_WAY_PATCH);
    expect(files.map(({ kind, path }) => ({ kind, path }))).toEqual([
      { kind: 'update', path: 'a.txt' },
      { kind: 'add', path: 'b/new.txt' },
      { kind: 'delete', path: 'c.txt' },
    ]);
    expect(files[0]!.hunks[0]).toMatchObject({ header: '@@ -1,3 +1,3 @@', oldStart: 1, oldCount: 3 });
  });

  test('plain diff -u headers with timestamps keep their paths', () => {
    const [file] = parseUnifiedDiff(
      lines(
        '--- src/x.ts\t2024-01-01 00:00:00',
        '+++ src/x.ts\t2024-01-02 00:00:00',
        '@@ -1 +1 @@',
        '-a',
        '+b',
      ),
    );
    expect(file).toMatchObject({ kind: 'update', path: 'src/x.ts' });
  });

  test('text around the files is ignored', () => {
    const files = parseUnifiedDiff(`Here is the fix:\n\n${THREE_WAY_PATCH}\nThat is all.\n`);
    expect(files).toHaveLength(3);
  });

  test('an empty line inside a hunk is an empty context line', () => {
    const [file] = parseUnifiedDiff('--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n');
    expect(file!.hunks[0]!.lines).toEqual([
      { kind: ' ', text: 'a' },
      { kind: ' ', text: '' },
      { kind: '-', text: 'b' },
      { kind: '+', text: 'c' },
    ]);
  });

  test('"No newline at end of file" marks the line before it', () => {
    const [file] = parseUnifiedDiff(
      lines('--- a/x', '+++ b/x', '@@ -1 +1 @@', '-a', '+b', '\\ No newline at end of file'),
    );
    expect(file!.hunks[0]!.lines[1]).toEqual({ kind: '+', text: 'b', noNewlineAtEnd: true });
  });

  test.each([
    ['no file headers', '@@ -1 +1 @@\n-a\n+b\n', /no file in the patch/],
    ['only prose', 'please change line 3\n', /no file in the patch/],
    ['a rename', lines('--- a/x', '+++ b/y', '@@ -1 +1 @@', '-a', '+b'), /renames are not supported/],
    [
      'a git rename',
      lines('diff --git a/x b/y', 'similarity index 100%', 'rename from x', 'rename to y'),
      /renames/,
    ],
    ['a binary patch', lines('diff --git a/x b/x', 'GIT binary patch', 'literal 1'), /binary/],
    ['a mode change only', lines('diff --git a/x b/x', 'old mode 100644', 'new mode 100755'), /mode-only/],
    ['a malformed hunk header', lines('--- a/x', '+++ b/x', '@@ -x +1 @@', '-a'), /malformed hunk header/],
    [
      'too few lines for the counts',
      lines('--- a/x', '+++ b/x', '@@ -1,3 +1,3 @@', ' a', '-b'),
      /line counts/,
    ],
    [
      'a foreign line inside a hunk',
      lines('--- a/x', '+++ b/x', '@@ -1,2 +1,2 @@', ' a', '*b', ' c'),
      /not a hunk line/,
    ],
    [
      'an added file with context lines',
      lines('--- /dev/null', '+++ b/x', '@@ -1 +1,2 @@', ' a', '+b'),
      /is added/,
    ],
    ['a changed file without hunks', lines('--- a/x', '+++ b/x'), /no hunks/],
  ])('refuses %s', (_label, patch, message) => {
    expect(() => parseUnifiedDiff(patch)).toThrow(PatchError);
    expect(() => parseUnifiedDiff(patch)).toThrow(message);
  });
});

describe('applying hunks', () => {
  const hunksOf = (patch: string) => parseUnifiedDiff(patch)[0]!.hunks;

  test('a hunk whose line numbers are off is found by its context', () => {
    const hunks = hunksOf(
      lines('--- a/x', '+++ b/x', '@@ -1,3 +1,3 @@', ' two', '-three', '+THREE', ' four'),
    );
    expect(applyHunks(lines('zero', 'one', 'two', 'three', 'four'), hunks, 'x')).toBe(
      lines('zero', 'one', 'two', 'THREE', 'four'),
    );
  });

  test('several hunks apply in order, each after the one before', () => {
    const hunks = hunksOf(
      lines('--- a/x', '+++ b/x', '@@ -1,2 +1,3 @@', ' a', '+a2', ' b', '@@ -5,2 +6,2 @@', ' e', '-f', '+F'),
    );
    expect(applyHunks(lines('a', 'b', 'c', 'd', 'e', 'f'), hunks, 'x')).toBe(
      lines('a', 'a2', 'b', 'c', 'd', 'e', 'F'),
    );
  });

  test('a repeated block is changed where the hunk says, not at its first occurrence', () => {
    const hunks = hunksOf(lines('--- a/x', '+++ b/x', '@@ -4,2 +4,2 @@', ' x', '-y', '+Y'));
    expect(applyHunks(lines('x', 'y', 'z', 'x', 'y'), hunks, 'x')).toBe(lines('x', 'y', 'z', 'x', 'Y'));
  });

  test('a pure insertion goes after the stated line', () => {
    const hunks = hunksOf(lines('--- a/x', '+++ b/x', '@@ -2,0 +3 @@', '+inserted'));
    expect(applyHunks(lines('a', 'b', 'c'), hunks, 'x')).toBe(lines('a', 'b', 'inserted', 'c'));
  });

  test('a CRLF file stays CRLF; context keeps its own bytes', () => {
    const hunks = hunksOf(lines('--- a/x', '+++ b/x', '@@ -1,2 +1,2 @@', ' a', '-b', '+B'));
    expect(applyHunks('a\r\nb\r\n', hunks, 'x')).toBe('a\r\nB\r\n');
  });

  test('the missing final newline is added or removed as the patch says', () => {
    const adding = hunksOf(
      lines('--- a/x', '+++ b/x', '@@ -1 +1 @@', '-a', '\\ No newline at end of file', '+a'),
    );
    expect(applyHunks('a', adding, 'x')).toBe('a\n');
    const removing = hunksOf(
      lines('--- a/x', '+++ b/x', '@@ -1 +1 @@', '-a', '+a', '\\ No newline at end of file'),
    );
    expect(applyHunks('a\n', removing, 'x')).toBe('a');
  });

  test('a file without a final newline keeps it that way when the change is elsewhere', () => {
    const hunks = hunksOf(lines('--- a/x', '+++ b/x', '@@ -1,2 +1,2 @@', '-a', '+A', ' b'));
    expect(applyHunks('a\nb\nc', hunks, 'x')).toBe('A\nb\nc');
  });

  test('a hunk that does not match says which hunk, where, and what differs', () => {
    const hunks = hunksOf(lines('--- a/x', '+++ b/x', '@@ -1,2 +1,2 @@', ' a', '-b', '+B'));
    expect(() => applyHunks(lines('a', 'bee'), hunks, 'x')).toThrow(
      'hunk 1 (@@ -1,2 +1,2 @@) of x does not match the file: its lines were not found anywhere; at line 2 the hunk expects "b" but the file has "bee"',
    );
  });

  test('hunks out of order are refused rather than applied backwards', () => {
    const hunks = hunksOf(lines('--- a/x', '+++ b/x', '@@ -3 +3 @@', '-c', '+C', '@@ -1 +1 @@', '-a', '+A'));
    expect(() => applyHunks(lines('a', 'b', 'c'), hunks, 'x')).toThrow(/hunk 2/);
  });
});

describe('apply_patch', () => {
  test('changes, adds and deletes files in one call and says what it did', async () => {
    await writeThreeWayFiles();
    const result = await runTool(applyPatchTool, workspace, { patch: THREE_WAY_PATCH });
    expect(resultText(result)).toBe(
      'Applied the patch to 3 file(s):\nM a.txt (+1 -1)\nA b/new.txt (+2 -0)\nD c.txt (+0 -1)',
    );
    expect(await read('a.txt')).toBe(lines('one', 'TWO', 'three'));
    expect(await read('b/new.txt')).toBe(lines('hello', 'world'));
    expect(await allFiles()).toEqual(['a.txt', 'b/new.txt']);
  });

  test.each([
    [
      'a later hunk does not match',
      (patch: string) => patch.replace('-bye', '-hello'),
      'InvalidArgs',
      /c\.txt does not match the file/,
    ],
    [
      'a file to change is missing',
      (patch: string) => patch.replaceAll('a.txt', 'missing.txt'),
      'FileNotFound',
      /missing\.txt/,
    ],
    [
      'a file to add exists',
      (patch: string) =>
        patch.replaceAll('b/new.txt', 'a.txt').replace('diff --git a/a.txt b/a.txt\nnew', 'new'),
      'InvalidArgs',
      /more than once|already exists/,
    ],
    [
      'a file is named twice',
      (patch: string) => `${patch}${lines('--- a/a.txt', '+++ b/a.txt', '@@ -1 +1 @@', '-one', '+ONE')}`,
      'InvalidArgs',
      /more than once/,
    ],
  ] as const)('nothing changes when %s', async (_label, spoil, kind, message) => {
    await writeThreeWayFiles();
    const error = await toolErrorOf(runTool(applyPatchTool, workspace, { patch: spoil(THREE_WAY_PATCH) }));
    expect(error.kind).toBe(kind);
    expect(error.message).toMatch(message);
    expect(error.message).toContain('no file was changed');
    expect(await read('a.txt')).toBe(lines('one', 'two', 'three'));
    expect(await read('c.txt')).toBe(lines('bye'));
    expect(await allFiles()).toEqual(['a.txt', 'c.txt']);
  });

  test('adding a file that exists is refused', async () => {
    await writeFile(path.join(root, 'x.txt'), 'mine\n');
    const error = await toolErrorOf(
      runTool(applyPatchTool, workspace, {
        patch: lines('--- /dev/null', '+++ b/x.txt', '@@ -0,0 +1 @@', '+theirs'),
      }),
    );
    expect(error.message).toContain('x.txt already exists');
    expect(await read('x.txt')).toBe('mine\n');
  });

  test('deleting a file that holds more than the patch removes is refused', async () => {
    await writeFile(path.join(root, 'x.txt'), lines('a', 'b'));
    const error = await toolErrorOf(
      runTool(applyPatchTool, workspace, {
        patch: lines('--- a/x.txt', '+++ /dev/null', '@@ -1 +0,0 @@', '-a'),
      }),
    );
    expect(error.kind).toBe('InvalidArgs');
    expect(await read('x.txt')).toBe(lines('a', 'b'));
  });

  test('a changed file keeps its mode; a symlink in the workspace still points at the changed file', async () => {
    await writeFile(path.join(root, 'run.sh'), lines('echo a'));
    await chmod(path.join(root, 'run.sh'), 0o751);
    await symlink('run.sh', path.join(root, 'alias.sh'));
    await runTool(applyPatchTool, workspace, {
      patch: lines('--- a/alias.sh', '+++ b/alias.sh', '@@ -1 +1 @@', '-echo a', '+echo b'),
    });
    expect(await read('run.sh')).toBe(lines('echo b'));
    expect((await stat(path.join(root, 'run.sh'))).mode & 0o777).toBe(0o751);
    expect((await fs.lstat(path.join(root, 'alias.sh'))).isSymbolicLink()).toBe(true);
  });

  test('an unreadable patch is InvalidArgs', async () => {
    const error = await toolErrorOf(runTool(applyPatchTool, workspace, { patch: 'change foo to bar' }));
    expect(error.kind).toBe('InvalidArgs');
    expect(error.message).toContain('the patch cannot be read');
  });
});

describe('all or nothing when the file system fails half-way', () => {
  /** The real file system, except that the `n`-th call of `operation` fails. */
  function failingOn(operation: 'rename' | 'link' | 'writeFile', n: number): FileOps {
    let calls = 0;
    const real = fs[operation] as (...args: unknown[]) => Promise<unknown>;
    return {
      ...fs,
      [operation]: (...args: unknown[]) => {
        calls++;
        if (calls === n)
          return Promise.reject(Object.assign(new Error(`injected ${operation} failure`), { code: 'EIO' }));
        return real(...args);
      },
    } as FileOps;
  }

  test.each([
    ['writing the second temporary file', failingOn('writeFile', 2)],
    ['putting the added file in place', failingOn('link', 2)], // link 1 backs up a.txt, link 2 places b/new.txt
    ['moving the deleted file aside', failingOn('rename', 2)], // rename 1 replaces a.txt
    ['replacing the changed file', failingOn('rename', 1)],
  ])('a failure %s leaves every file as it was, and no leftovers', async (_label, ops) => {
    await writeThreeWayFiles();
    const tool = createApplyPatchTool(ops);
    const error = await toolErrorOf(runTool(tool, workspace, { patch: THREE_WAY_PATCH }));
    expect(error.kind).toBe('ExecutionFailed');
    expect(error.message).toContain('injected');
    expect(error.message).toContain('no file was changed');
    expect(await read('a.txt')).toBe(lines('one', 'two', 'three'));
    expect(await read('c.txt')).toBe(lines('bye'));
    expect(await allFiles()).toEqual(['a.txt', 'c.txt']);
    // The directory made for the added file is gone again.
    expect(await readdir(root)).toEqual(['a.txt', 'c.txt']);
  });

  test('a file changed by someone else after it was read is not overwritten', async () => {
    await writeFile(path.join(root, 'a.txt'), 'now\n');
    const error = await commitFileChanges([
      { kind: 'update', target: await targetOf('a.txt'), content: 'new\n', expected: 'then\n' },
    ]).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(FileChangesFailed);
    expect((error as Error).message).toContain('changed while the patch was being applied');
    expect(await read('a.txt')).toBe('now\n');
    expect(await allFiles()).toEqual(['a.txt']);
  });

  test('a file that appears where one is being added is not overwritten', async () => {
    const target = path.join(root, 'late.txt');
    let placed = false;
    const ops = {
      ...fs,
      // Someone creates the file between the check and the commit.
      link: async (from: string, to: string) => {
        if (!placed && path.basename(to) === 'late.txt') {
          placed = true;
          await writeFile(target, 'theirs\n');
        }
        return fs.link(from, to);
      },
    } as FileOps;
    await expect(
      commitFileChanges([{ kind: 'add', target: await targetOf('late.txt'), content: 'mine\n' }], ops),
    ).rejects.toThrow(/EEXIST/);
    expect(await read('late.txt')).toBe('theirs\n');
    expect(await allFiles()).toEqual(['late.txt']);
  });

  test('created parent directories are removed when the commit fails', async () => {
    await mkdir(path.join(root, 'keep'));
    await expect(
      commitFileChanges(
        [{ kind: 'add', target: await targetOf('keep/deep/er/x.txt'), content: 'x' }],
        failingOn('link', 1),
      ),
    ).rejects.toThrow('injected link failure; no file was changed');
    expect(await readdir(root)).toEqual(['keep']);
    expect(await readdir(path.join(root, 'keep'))).toEqual([]);
  });
});
