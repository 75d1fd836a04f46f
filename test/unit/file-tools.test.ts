import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { editTool } from '../../src/tools/builtin/edit';
import { listDirectoryTool } from '../../src/tools/builtin/list-directory';
import { readTool } from '../../src/tools/builtin/read';
import { ToolError } from '../../src/tools/tool-error';
import { Workspace } from '../../src/tools/workspace';
import { writeTool } from '../../src/tools/builtin/write';
import { makeTempDir, removeDir, resultText, runTool, toolErrorOf } from './tool-harness';

let root: string;
let workspace: Workspace;

beforeEach(async () => {
  root = await makeTempDir('durable-agent-unit-files-');
  workspace = new Workspace(root);
});

afterEach(async () => {
  await removeDir(root);
});

const put = async (relative: string, content: string | Buffer) => {
  const file = path.join(root, relative);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
  return file;
};

describe('read', () => {
  const fiveLines = 'l1\nl2\nl3\nl4\nl5';

  test('returns the whole file with its line counts', async () => {
    await put('five.txt', fiveLines);
    const result = await runTool(readTool, workspace, { path: 'five.txt' });
    expect(resultText(result)).toBe(fiveLines);
    expect(result.details).toEqual({ path: 'five.txt', startLine: 1, endLine: 5, totalLines: 5 });
  });

  test('offset and limit select lines and a note says where to continue', async () => {
    await put('five.txt', fiveLines);
    const result = await runTool(readTool, workspace, { path: 'five.txt', offset: 2, limit: 2 });
    expect(resultText(result)).toBe('l2\nl3\n\n[Lines 2-3 of 5. Use offset=4 to continue.]');
    expect(result.details).toEqual({ path: 'five.txt', startLine: 2, endLine: 3, totalLines: 5 });
  });

  test('reading to the end has no continuation note', async () => {
    await put('five.txt', fiveLines);
    const result = await runTool(readTool, workspace, { path: 'five.txt', offset: 4 });
    expect(resultText(result)).toBe('l4\nl5');
  });

  test('the default limit is 2000 lines', async () => {
    const lines = Array.from({ length: 2_500 }, (_, index) => `line ${index + 1}`);
    await put('long.txt', lines.join('\n'));
    const text = resultText(await runTool(readTool, workspace, { path: 'long.txt' }));
    expect(text).toContain('\nline 2000\n');
    expect(text).not.toContain('line 2001');
    expect(text.endsWith('[Lines 1-2000 of 2500. Use offset=2001 to continue.]')).toBe(true);
  });

  test('an offset past the end is refused', async () => {
    await put('five.txt', fiveLines);
    const error = await toolErrorOf(runTool(readTool, workspace, { path: 'five.txt', offset: 10 }));
    expect(error.kind).toBe('InvalidArgs');
    expect(error.message).toContain('past the end');
  });

  test('offset 0 is rejected by the schema', () => {
    expect(readTool.parameters.safeParse({ path: 'x', offset: 0 }).success).toBe(false);
    expect(readTool.parameters.safeParse({ path: 'x', limit: 0 }).success).toBe(false);
    expect(readTool.parameters.safeParse({ path: '' }).success).toBe(false);
  });

  test('a binary file is refused', async () => {
    await put('blob.bin', Buffer.from([0x50, 0x4b, 0x00, 0x01, 0x41]));
    const error = await toolErrorOf(runTool(readTool, workspace, { path: 'blob.bin' }));
    expect(error.kind).toBe('InvalidArgs');
    expect(error.message).toContain('binary');
  });

  test('a missing file is FileNotFound', async () => {
    const error = await toolErrorOf(runTool(readTool, workspace, { path: 'nope.txt' }));
    expect(error.kind).toBe('FileNotFound');
    expect(error.message).toContain('nope.txt');
  });

  test('a directory is refused', async () => {
    await mkdir(path.join(root, 'dir'));
    const error = await toolErrorOf(runTool(readTool, workspace, { path: 'dir' }));
    expect(error.kind).toBe('InvalidArgs');
  });

  test('a path through a regular file is a ToolError, not an unexpected failure', async () => {
    // realpath() fails with ENOTDIR here; the model should get a readable error, not a retried crash.
    await put('plain.txt', 'x');
    const error = await toolErrorOf(runTool(readTool, workspace, { path: 'plain.txt/child' }));
    expect(['InvalidArgs', 'FileNotFound']).toContain(error.kind);
  });

  test('UTF-8 text is returned intact', async () => {
    await put('utf8.txt', 'Grüße € 😀\nzweite');
    const result = await runTool(readTool, workspace, { path: 'utf8.txt', limit: 1 });
    expect(resultText(result)).toBe('Grüße € 😀\n\n[Lines 1-1 of 2. Use offset=2 to continue.]');
  });
});

describe('write', () => {
  test('creates parent directories and writes the exact content', async () => {
    const content = 'first line\nGrüße €\n';
    const result = await runTool(writeTool, workspace, { path: 'a/b/c/new.txt', content });
    await expect(readFile(path.join(root, 'a/b/c/new.txt'), 'utf8')).resolves.toBe(content);
    const bytes = Buffer.byteLength(content);
    expect(bytes).not.toBe(content.length);
    expect(resultText(result)).toBe(`Wrote ${bytes} bytes to a/b/c/new.txt`);
    expect(result.details).toEqual({ path: 'a/b/c/new.txt', bytes });
  });

  test('overwrites an existing file completely', async () => {
    await put('f.txt', 'a much longer original content');
    await runTool(writeTool, workspace, { path: 'f.txt', content: 'short' });
    await expect(readFile(path.join(root, 'f.txt'), 'utf8')).resolves.toBe('short');
  });

  test('empty content creates an empty file', async () => {
    await runTool(writeTool, workspace, { path: 'empty.txt', content: '' });
    await expect(readFile(path.join(root, 'empty.txt'), 'utf8')).resolves.toBe('');
  });

  test('writing onto a directory is refused', async () => {
    await mkdir(path.join(root, 'dir'));
    const error = await toolErrorOf(runTool(writeTool, workspace, { path: 'dir', content: 'x' }));
    expect(error.kind).toBe('InvalidArgs');
  });

  test('writing through a symlink pointing inside writes its target', async () => {
    await put('real.txt', 'old');
    await symlink(path.join(root, 'real.txt'), path.join(root, 'alias.txt'));
    const result = await runTool(writeTool, workspace, { path: 'alias.txt', content: 'new' });
    await expect(readFile(path.join(root, 'real.txt'), 'utf8')).resolves.toBe('new');
    expect(resultText(result)).toBe('Wrote 3 bytes to real.txt');
  });
});

describe('edit', () => {
  const original = 'alpha\nbeta\ngamma\ndelta\n';

  test('overlapping occurrences count as several matches, and the file is left alone', async () => {
    const file = await put('overlap.txt', 'aaa');
    const error = await toolErrorOf(
      runTool(editTool, workspace, { path: 'overlap.txt', old_string: 'aa', new_string: 'b' }),
    );
    expect(error.kind).toBe('InvalidArgs');
    expect(error.message).toContain('matches 2 times');
    await expect(readFile(file, 'utf8')).resolves.toBe('aaa');
  });

  test('replaces the unique match and leaves the rest exact', async () => {
    const file = await put('e.txt', original);
    const result = await runTool(editTool, workspace, {
      path: 'e.txt',
      old_string: 'gamma',
      new_string: 'GAMMA\nextra',
    });
    await expect(readFile(file, 'utf8')).resolves.toBe('alpha\nbeta\nGAMMA\nextra\ndelta\n');
    expect(resultText(result)).toBe('Edited e.txt at line 3');
    expect(result.details).toEqual({ path: 'e.txt', line: 3 });
  });

  test('replacement text is inserted literally ($& and $1 are not patterns)', async () => {
    const file = await put('e.txt', original);
    await runTool(editTool, workspace, { path: 'e.txt', old_string: 'beta', new_string: "$&-$1-$$-$'" });
    await expect(readFile(file, 'utf8')).resolves.toBe("alpha\n$&-$1-$$-$'\ngamma\ndelta\n");
  });

  test('an empty new_string deletes the match', async () => {
    const file = await put('e.txt', original);
    await runTool(editTool, workspace, { path: 'e.txt', old_string: 'beta\n', new_string: '' });
    await expect(readFile(file, 'utf8')).resolves.toBe('alpha\ngamma\ndelta\n');
  });

  test('zero matches is InvalidArgs and the file is unchanged', async () => {
    const file = await put('e.txt', original);
    const error = await toolErrorOf(
      runTool(editTool, workspace, { path: 'e.txt', old_string: 'epsilon', new_string: 'x' }),
    );
    expect(error.kind).toBe('InvalidArgs');
    expect(error.message).toContain('not found');
    await expect(readFile(file, 'utf8')).resolves.toBe(original);
  });

  test('multiple matches is InvalidArgs mentioning the count, and the file is unchanged', async () => {
    const text = 'x = 1\nx = 2\nx = 3\n';
    const file = await put('e.txt', text);
    const error = await toolErrorOf(
      runTool(editTool, workspace, { path: 'e.txt', old_string: 'x = ', new_string: 'y = ' }),
    );
    expect(error.kind).toBe('InvalidArgs');
    expect(error.message).toContain('3 times');
    await expect(readFile(file, 'utf8')).resolves.toBe(text);
  });

  test('matching is case-sensitive', async () => {
    const file = await put('e.txt', original);
    const error = await toolErrorOf(
      runTool(editTool, workspace, { path: 'e.txt', old_string: 'BETA', new_string: 'x' }),
    );
    expect(error.kind).toBe('InvalidArgs');
    await expect(readFile(file, 'utf8')).resolves.toBe(original);
  });

  test('a missing file is FileNotFound', async () => {
    const error = await toolErrorOf(
      runTool(editTool, workspace, { path: 'missing.txt', old_string: 'a', new_string: 'b' }),
    );
    expect(error.kind).toBe('FileNotFound');
  });

  test('an empty old_string is rejected by the schema', () => {
    expect(editTool.parameters.safeParse({ path: 'e.txt', old_string: '', new_string: 'x' }).success).toBe(
      false,
    );
  });
});

describe('list_directory', () => {
  test('lists entries sorted, directories with "/" and symlinks with "@"', async () => {
    await put('zeta.txt', '');
    await put('Beta.md', '');
    await mkdir(path.join(root, 'alpha'));
    await put('sub/nested.txt', '');
    await symlink(path.join(root, 'zeta.txt'), path.join(root, 'link'));
    const result = await runTool(listDirectoryTool, workspace, {});
    expect(resultText(result).split('\n')).toEqual(['Beta.md', 'alpha/', 'link@', 'sub/', 'zeta.txt']);
    expect(result.details).toEqual({ path: '.', entries: 5 });
  });

  test('the listing is sorted as displayed, suffixes included', async () => {
    // readdir order puts the directory "x" before "x.md"; with its "/" suffix it sorts after.
    await mkdir(path.join(root, 'x'));
    await put('x.md', '');
    await put('x-y', '');
    const lines = resultText(await runTool(listDirectoryTool, workspace, {})).split('\n');
    expect(lines).toEqual(['x-y', 'x.md', 'x/']);
  });

  test('lists a subdirectory only', async () => {
    await put('sub/b.txt', '');
    await put('sub/a.txt', '');
    await put('top.txt', '');
    const result = await runTool(listDirectoryTool, workspace, { path: 'sub' });
    expect(resultText(result)).toBe('a.txt\nb.txt');
    expect(result.details).toEqual({ path: 'sub', entries: 2 });
  });

  test('an empty directory says so', async () => {
    await mkdir(path.join(root, 'empty'));
    const result = await runTool(listDirectoryTool, workspace, { path: 'empty' });
    expect(resultText(result)).toBe('(empty directory)');
  });

  test('a missing directory is FileNotFound', async () => {
    const error = await toolErrorOf(runTool(listDirectoryTool, workspace, { path: 'nowhere' }));
    expect(error).toBeInstanceOf(ToolError);
    expect(error.kind).toBe('FileNotFound');
  });

  test('a file is not a directory', async () => {
    await put('file.txt', 'x');
    const error = await toolErrorOf(runTool(listDirectoryTool, workspace, { path: 'file.txt' }));
    expect(error.kind).toBe('InvalidArgs');
  });
});
