import { existsSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { editTool } from '../../src/tools/builtin/edit';
import { globTool } from '../../src/tools/builtin/glob';
import { grepTool } from '../../src/tools/builtin/grep';
import { listDirectoryTool } from '../../src/tools/builtin/list-directory';
import { readTool } from '../../src/tools/builtin/read';
import { ToolError } from '../../src/tools/tool-error';
import { Workspace } from '../../src/tools/workspace';
import { writeTool } from '../../src/tools/builtin/write';
import { makeTempDir, removeDir, resultText, runTool, toolErrorOf } from './tool-harness';

/**
 * Layout:
 *   <parent>/ws                    the workspace
 *   <parent>/ws/sub/inner.txt
 *   <parent>/ws/in-link        ->  <parent>/ws/sub/inner.txt
 *   <parent>/ws/in-dir-link    ->  <parent>/ws/sub
 *   <parent>/ws/out-file       ->  <parent>/outside/secret.txt
 *   <parent>/ws/out-dir        ->  <parent>/outside
 *   <parent>/ws/dangling       ->  <parent>/outside/missing.txt
 *   <parent>/outside/secret.txt
 *   <parent>/ws-sibling/file.txt   (shares the workspace's name as a prefix)
 */
let parent: string;
let root: string;
let outside: string;
let workspace: Workspace;
const SECRET = 'TOP SECRET CONTENT\n';

beforeEach(async () => {
  parent = await makeTempDir('durable-agent-unit-ws-');
  root = path.join(parent, 'ws');
  outside = path.join(parent, 'outside');
  await mkdir(path.join(root, 'sub'), { recursive: true });
  await mkdir(outside);
  await mkdir(path.join(parent, 'ws-sibling'));
  await writeFile(path.join(parent, 'ws-sibling', 'file.txt'), SECRET);
  await writeFile(path.join(root, 'sub', 'inner.txt'), 'inner\n');
  await writeFile(path.join(outside, 'secret.txt'), SECRET);
  await symlink(path.join(root, 'sub', 'inner.txt'), path.join(root, 'in-link'));
  await symlink(path.join(root, 'sub'), path.join(root, 'in-dir-link'));
  await symlink(path.join(outside, 'secret.txt'), path.join(root, 'out-file'));
  await symlink(outside, path.join(root, 'out-dir'));
  await symlink(path.join(outside, 'missing.txt'), path.join(root, 'dangling'));
  workspace = new Workspace(root);
});

afterEach(async () => {
  await removeDir(parent);
});

describe('Workspace.resolve refuses paths that leave the workspace', () => {
  test.each<[string, () => string]>([
    ['parent directory "../x"', () => '../x'],
    ['"../../etc/passwd"', () => '../../etc/passwd'],
    ['".." itself', () => '..'],
    ['"a/../../x" (climbs out after a descent)', () => 'a/../../x'],
    ['absolute path outside ("/etc/passwd")', () => '/etc/passwd'],
    ['absolute path of the outside directory', () => path.join(outside, 'secret.txt')],
    ['sibling directory sharing the root as a name prefix', () => '../ws-sibling/file.txt'],
    ['absolute path of the prefix-sharing sibling', () => path.join(parent, 'ws-sibling', 'file.txt')],
    ['symlink to a file outside', () => 'out-file'],
    ['symlink to a directory outside', () => 'out-dir'],
    ['existing file through an outside directory symlink', () => 'out-dir/secret.txt'],
    ['new file through an outside directory symlink', () => 'out-dir/new.txt'],
    ['new nested path through an outside directory symlink', () => 'out-dir/x/y/z.txt'],
    ['dangling symlink pointing outside', () => 'dangling'],
    ['NUL byte', () => 'a\0b'],
  ])('%s', async (_label, requested) => {
    const error = await toolErrorOf(workspace.resolve(requested()));
    expect(error).toBeInstanceOf(ToolError);
    expect(error.kind).toBe('InvalidPath');
  });

  test('the refusal message names the requested path', async () => {
    const error = await toolErrorOf(workspace.resolve('../escape-attempt'));
    expect(error.message).toContain('../escape-attempt');
  });
});

describe('Workspace.resolve allows paths inside the workspace', () => {
  test('the root itself', async () => {
    await expect(workspace.resolve('.')).resolves.toBe(root);
    await expect(workspace.resolve('')).resolves.toBe(root);
  });

  test('an existing relative file', async () => {
    await expect(workspace.resolve('sub/inner.txt')).resolves.toBe(path.join(root, 'sub', 'inner.txt'));
  });

  test('a nested path that does not exist yet resolves inside', async () => {
    await expect(workspace.resolve('new/deeper/file.txt')).resolves.toBe(
      path.join(root, 'new', 'deeper', 'file.txt'),
    );
  });

  test('".." that stays inside is normalised', async () => {
    await expect(workspace.resolve('sub/../sub/./inner.txt')).resolves.toBe(
      path.join(root, 'sub', 'inner.txt'),
    );
  });

  test('an absolute path inside the workspace', async () => {
    await expect(workspace.resolve(path.join(root, 'sub', 'inner.txt'))).resolves.toBe(
      path.join(root, 'sub', 'inner.txt'),
    );
  });

  test('a symlink pointing inside resolves to its real target', async () => {
    await expect(workspace.resolve('in-link')).resolves.toBe(path.join(root, 'sub', 'inner.txt'));
  });

  test('a new file through a directory symlink pointing inside', async () => {
    await expect(workspace.resolve('in-dir-link/new.txt')).resolves.toBe(path.join(root, 'sub', 'new.txt'));
  });
});

describe('Workspace construction and helpers', () => {
  test('a relative root is refused', () => {
    expect(() => new Workspace('relative/dir')).toThrow(/absolute/);
  });

  test('the root is canonicalised when reached through a symlink', async () => {
    const alias = path.join(parent, 'alias');
    await symlink(root, alias);
    const aliased = new Workspace(alias);
    expect(aliased.root).toBe(root);
    await expect(aliased.resolve('sub/inner.txt')).resolves.toBe(path.join(root, 'sub', 'inner.txt'));
  });

  test('relative() shows paths relative to the root, and the root as "."', () => {
    expect(workspace.relative(path.join(root, 'sub', 'inner.txt'))).toBe('sub/inner.txt');
    expect(workspace.relative(root)).toBe('.');
  });

  test('contains() accepts the root and descendants but not prefix-sharing siblings', () => {
    expect(workspace.contains(root)).toBe(true);
    expect(workspace.contains(path.join(root, 'a'))).toBe(true);
    expect(workspace.contains(`${root}-sibling`)).toBe(false);
    expect(workspace.contains(parent)).toBe(false);
  });
});

describe('file tools refuse to escape the workspace', () => {
  test.each(['../x', '/etc/passwd', 'out-file', 'out-dir/secret.txt'])('read %s', async (target) => {
    const error = await toolErrorOf(runTool(readTool, workspace, { path: target }));
    expect(error.kind).toBe('InvalidPath');
  });

  test.each(['../x', 'out-dir', '/etc'])('list_directory %s', async (target) => {
    const error = await toolErrorOf(runTool(listDirectoryTool, workspace, { path: target }));
    expect(error.kind).toBe('InvalidPath');
  });

  test.each(['../', 'out-dir', 'out-file', '/etc'])('grep with path %s', async (target) => {
    const error = await toolErrorOf(runTool(grepTool, workspace, { pattern: 'SECRET', path: target }));
    expect(error.kind).toBe('InvalidPath');
  });

  test.each(['../*', '/etc/*', 'a/../../*', '..'])('grep with glob %s', async (glob) => {
    const error = await toolErrorOf(runTool(grepTool, workspace, { pattern: 'SECRET', glob }));
    expect(error.kind).toBe('InvalidPath');
  });

  test.each(['../*', '/etc/*', 'sub/../../*', '../ws-sibling/*', '**/../../*'])(
    'glob with pattern %s',
    async (pattern) => {
      const error = await toolErrorOf(runTool(globTool, workspace, { pattern }));
      expect(error.kind).toBe('InvalidPath');
    },
  );

  test.each(['..', 'out-dir', '/etc'])('glob with path %s', async (target) => {
    const error = await toolErrorOf(runTool(globTool, workspace, { pattern: '*', path: target }));
    expect(error.kind).toBe('InvalidPath');
  });

  test('glob does not list files outside through a symlinked directory', async () => {
    // The pattern itself is relative and has no "..", but its first segment is a symlink to outside.
    const result = await runTool(globTool, workspace, { pattern: 'out-dir/*' }).catch(
      (error: unknown) => error,
    );
    if (result instanceof ToolError) {
      expect(result.kind).toBe('InvalidPath');
    } else {
      expect(JSON.stringify(result)).not.toContain('secret.txt');
    }
  });

  test('write through a symlink to an outside file is refused and the file is untouched', async () => {
    const error = await toolErrorOf(runTool(writeTool, workspace, { path: 'out-file', content: 'pwned' }));
    expect(error.kind).toBe('InvalidPath');
    await expect(readFile(path.join(outside, 'secret.txt'), 'utf8')).resolves.toBe(SECRET);
  });

  test('write through an outside directory symlink creates nothing outside', async () => {
    const error = await toolErrorOf(
      runTool(writeTool, workspace, { path: 'out-dir/created/new.txt', content: 'pwned' }),
    );
    expect(error.kind).toBe('InvalidPath');
    expect(existsSync(path.join(outside, 'created'))).toBe(false);
  });

  test('write through a dangling symlink creates nothing outside', async () => {
    const error = await toolErrorOf(runTool(writeTool, workspace, { path: 'dangling', content: 'pwned' }));
    expect(error.kind).toBe('InvalidPath');
    expect(existsSync(path.join(outside, 'missing.txt'))).toBe(false);
  });

  test.each(['../outside/secret.txt', path.join('..', 'ws-sibling', 'file.txt')])(
    'write to %s is refused',
    async (target) => {
      const error = await toolErrorOf(runTool(writeTool, workspace, { path: target, content: 'pwned' }));
      expect(error.kind).toBe('InvalidPath');
      await expect(readFile(path.join(parent, target.replace(/^\.\.\//, '')), 'utf8')).resolves.toBe(SECRET);
    },
  );

  test('edit through a symlink to an outside file is refused and the file is untouched', async () => {
    const error = await toolErrorOf(
      runTool(editTool, workspace, { path: 'out-file', old_string: 'SECRET', new_string: 'public' }),
    );
    expect(error.kind).toBe('InvalidPath');
    await expect(readFile(path.join(outside, 'secret.txt'), 'utf8')).resolves.toBe(SECRET);
  });

  test('edit of "../" path is refused', async () => {
    const error = await toolErrorOf(
      runTool(editTool, workspace, { path: '../outside/secret.txt', old_string: 'SECRET', new_string: 'x' }),
    );
    expect(error.kind).toBe('InvalidPath');
    await expect(readFile(path.join(outside, 'secret.txt'), 'utf8')).resolves.toBe(SECRET);
  });

  test('read through a symlink pointing inside works', async () => {
    const result = await runTool(readTool, workspace, { path: 'in-link' });
    expect(resultText(result)).toBe('inner\n');
  });
});
