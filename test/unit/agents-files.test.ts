import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, open, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type AgentsFile, readAgentsFiles } from '../../src/activities/agents-files';
import { createComposeSystemPrompt } from '../../src/activities/compose-system-prompt';

// A read that waits on a FIFO or a device never returns: such tests fail by this timeout.
const PROMPTLY_MS = 10_000;

let root: string;
let outside: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'agents-files-'));
  outside = await mkdtemp(path.join(os.tmpdir(), 'agents-files-outside-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

async function put(relative: string, text: string): Promise<void> {
  await mkdir(path.dirname(path.join(root, relative)), { recursive: true });
  await writeFile(path.join(root, relative), text);
}

async function link(relative: string, target: string): Promise<void> {
  await mkdir(path.dirname(path.join(root, relative)), { recursive: true });
  await symlink(target, path.join(root, relative));
}

const texts = (files: AgentsFile[]) => files.map((file) => ('text' in file ? file.text : file.skipped));

test('an AGENTS.md linking out of the workspace root is not read: the secret never reaches the prompt', async () => {
  await writeFile(path.join(outside, 'id_ed25519'), 'PRIVATE KEY SECRET');
  await link('repo/AGENTS.md', path.join(outside, 'id_ed25519'));
  await link('repo/sub/AGENTS.md', '../../../' + path.basename(outside) + '/id_ed25519');
  const files = await readAgentsFiles(path.join(root, 'repo/sub'), root);
  expect(files).toEqual([
    {
      path: path.join(root, 'repo/AGENTS.md'),
      skipped: expect.stringMatching(/leading out of the workspace root/),
    },
    { path: path.join(root, 'repo/sub/AGENTS.md'), skipped: expect.stringMatching(/leading out/) },
  ]);
  const prompt = await createComposeSystemPrompt({ defaultWorkspace: root })({
    workspace: path.join(root, 'repo'),
    tools: [],
  });
  expect(prompt).not.toContain('SECRET');
  expect(prompt).toContain(`## ${path.join(root, 'repo/AGENTS.md')}\n\n(not read: it is a symbolic link`);
});

test('an AGENTS.md linking to a file inside the workspace root is read', async () => {
  await put('shared/rules.md', 'shared rules');
  await link('repo/AGENTS.md', '../shared/rules.md');
  await link('repo/linked', path.join(root, 'shared'));
  await put('shared/AGENTS.md', 'through a linked directory');
  expect(texts(await readAgentsFiles(path.join(root, 'repo'), root))).toEqual(['shared rules']);
  expect(texts(await readAgentsFiles(path.join(root, 'repo/linked'), root))).toEqual([
    'shared rules',
    'through a linked directory',
  ]);
});

test(
  'a FIFO named AGENTS.md is skipped at once, not waited on',
  async () => {
    await mkdir(path.join(root, 'repo'));
    execFileSync('mkfifo', [path.join(root, 'repo/AGENTS.md')]);
    await put('AGENTS.md', 'root rules');
    expect(texts(await readAgentsFiles(path.join(root, 'repo'), root))).toEqual([
      'root rules',
      'it is not a regular file',
    ]);
  },
  PROMPTLY_MS,
);

test(
  'a device named AGENTS.md is not read, even inside the root',
  async () => {
    await link('repo/AGENTS.md', '/dev/zero');
    const files = await readAgentsFiles(path.join(root, 'repo'), '/');
    expect(files.at(-1)).toEqual({
      path: path.join(root, 'repo/AGENTS.md'),
      skipped: 'it is not a regular file',
    });
  },
  PROMPTLY_MS,
);

test(
  'of a huge AGENTS.md only the bound is read',
  async () => {
    await put('AGENTS.md', 'huge rules');
    const file = await open(path.join(root, 'AGENTS.md'), 'r+');
    await file.truncate(10 * 2 ** 30);
    await file.close();
    const files = await readAgentsFiles(root, root, 100);
    expect(texts(files)).toEqual([
      `huge rules${'\0'.repeat(90)}\n[… cut: the AGENTS.md files are limited to 100 characters together]`,
    ]);
  },
  PROMPTLY_MS,
);

test('the bound holds across the files together: once spent, the files below are not read', async () => {
  await put('AGENTS.md', 'a'.repeat(60));
  await put('team/AGENTS.md', 'b'.repeat(60));
  await put('team/app/AGENTS.md', 'c'.repeat(60));
  expect(texts(await readAgentsFiles(path.join(root, 'team/app'), root, 100))).toEqual([
    'a'.repeat(60),
    `${'b'.repeat(40)}\n[… cut: the AGENTS.md files are limited to 100 characters together]`,
  ]);
});

test('with nested roots, the files are read from the outermost root down, the nearest last', async () => {
  await put('AGENTS.md', 'outermost');
  await put('team/AGENTS.md', 'middle');
  await put('team/app/AGENTS.md', 'nearest');
  const prompt = await createComposeSystemPrompt({
    defaultWorkspace: path.join(root, 'team'),
    workspaceRoots: [path.join(root, 'team'), root],
  })({ workspace: path.join(root, 'team/app'), tools: [] });
  const sections = [...prompt.matchAll(/^## (.+)\n\n(.+)$/gm)].map((match) => [match[1], match[2]]);
  expect(sections).toEqual([
    [path.join(root, 'AGENTS.md'), 'outermost'],
    [path.join(root, 'team/AGENTS.md'), 'middle'],
    [path.join(root, 'team/app/AGENTS.md'), 'nearest'],
  ]);
});
