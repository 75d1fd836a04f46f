import { mkdir, readFile, readdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { applyPatchTool } from '../../src/tools/builtin/apply-patch';
import { editTool } from '../../src/tools/builtin/edit';
import { globTool } from '../../src/tools/builtin/glob';
import { grepTool } from '../../src/tools/builtin/grep';
import { listDirectoryTool } from '../../src/tools/builtin/list-directory';
import { readTool } from '../../src/tools/builtin/read';
import type { AgentTool } from '../../src/tools/tool';
import { Workspace } from '../../src/tools/workspace';
import { writeTool } from '../../src/tools/builtin/write';
import { makeTempDir, removeDir, runTool, toolErrorOf } from './tool-harness';

/**
 * Every file tool, every way out of the workspace: each is refused with InvalidPath, and nothing
 * outside the workspace is read or changed.
 */
let parent: string;
let root: string;
let outside: string;
let workspace: Workspace;

beforeEach(async () => {
  parent = await makeTempDir('durable-agent-unit-hostile-');
  root = path.join(parent, 'ws');
  outside = path.join(parent, 'outside');
  await mkdir(path.join(root, 'sub'), { recursive: true });
  await mkdir(outside);
  // A sibling whose name starts with the workspace's: a prefix check alone would let it in.
  await mkdir(`${root}-evil`);
  await writeFile(path.join(outside, 'secret.txt'), 'top secret\n');
  await writeFile(path.join(`${root}-evil`, 'secret.txt'), 'top secret\n');
  await symlink(path.join(outside, 'secret.txt'), path.join(root, 'link-out'));
  await symlink(outside, path.join(root, 'dir-out'));
  await symlink(path.join(outside, 'not-yet.txt'), path.join(root, 'dangling'));
  await symlink('loop-b', path.join(root, 'loop-a'));
  await symlink('loop-a', path.join(root, 'loop-b'));
  workspace = new Workspace(root);
});

afterEach(async () => {
  await removeDir(parent);
});

const HOSTILE_PATHS: [string, () => string][] = [
  ['parent traversal', () => '../outside/secret.txt'],
  ['traversal through a subdirectory', () => 'sub/../../outside/secret.txt'],
  ['deep traversal', () => 'sub/../../../../../../etc/passwd'],
  ['an absolute path outside', () => '/etc/passwd'],
  ['an absolute path to the outside file', () => path.join(outside, 'secret.txt')],
  ['an absolute path through the workspace and back out', () => `${root}/../outside/secret.txt`],
  ['a sibling sharing the workspace name as prefix', () => `${root}-evil/secret.txt`],
  ['a symlink to a file outside', () => 'link-out'],
  ['a path through a symlinked directory', () => 'dir-out/secret.txt'],
  ['a dangling symlink pointing outside', () => 'dangling'],
  ['a symlink loop', () => 'loop-a'],
  ['a NUL byte', () => 'sub/file\0.txt'],
  ['a NUL byte hiding a traversal', () => 'ok.txt\0/../../outside/secret.txt'],
];

const TOOLS: [string, AgentTool, (target: string) => Record<string, unknown>][] = [
  ['read', readTool as AgentTool, (target) => ({ path: target })],
  ['write', writeTool as AgentTool, (target) => ({ path: target, content: 'pwned' })],
  ['edit', editTool as AgentTool, (target) => ({ path: target, old_string: 'top', new_string: 'pwned' })],
  ['list_directory', listDirectoryTool as AgentTool, (target) => ({ path: target })],
  ['grep', grepTool as AgentTool, (target) => ({ pattern: 'secret', path: target })],
  ['glob', globTool as AgentTool, (target) => ({ pattern: '*', path: target })],
  [
    'apply_patch (change)',
    applyPatchTool as AgentTool,
    (target) => ({ patch: `--- ${target}\n+++ ${target}\n@@ -1 +1 @@\n-top secret\n+pwned\n` }),
  ],
  [
    'apply_patch (add)',
    applyPatchTool as AgentTool,
    (target) => ({ patch: `--- /dev/null\n+++ ${target}\n@@ -0,0 +1 @@\n+pwned\n` }),
  ],
  [
    'apply_patch (delete)',
    applyPatchTool as AgentTool,
    (target) => ({ patch: `--- ${target}\n+++ /dev/null\n@@ -1 +0,0 @@\n-top secret\n` }),
  ],
];

const cases = TOOLS.flatMap(([toolName, tool, args]) =>
  HOSTILE_PATHS.map(([label, target]) => [toolName, label, tool, args, target] as const),
);

test.each(cases)('%s refuses %s with InvalidPath', async (_toolName, _label, tool, args, target) => {
  const error = await toolErrorOf(runTool(tool, workspace, args(target())));
  expect(error.kind).toBe('InvalidPath');
  expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('top secret\n');
  expect(await readFile(path.join(`${root}-evil`, 'secret.txt'), 'utf8')).toBe('top secret\n');
  expect((await readdir(outside)).sort()).toEqual(['secret.txt']);
});

test('an apply_patch with one hostile file among good ones changes nothing', async () => {
  await writeFile(path.join(root, 'good.txt'), 'one\n');
  const patch = [
    '--- a/good.txt',
    '+++ b/good.txt',
    '@@ -1 +1 @@',
    '-one',
    '+two',
    '--- a/../outside/secret.txt',
    '+++ b/../outside/secret.txt',
    '@@ -1 +1 @@',
    '-top secret',
    '+pwned',
    '',
  ].join('\n');
  const error = await toolErrorOf(runTool(applyPatchTool, workspace, { patch }));
  expect(error.kind).toBe('InvalidPath');
  expect(error.message).toContain('no file was changed');
  expect(await readFile(path.join(root, 'good.txt'), 'utf8')).toBe('one\n');
  expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('top secret\n');
});
