import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { readAgentsFiles } from '../../src/activities/agents-files';
import { createComposeSystemPrompt } from '../../src/activities/compose-system-prompt';
import { withAppendedPrompt } from '../../src/shared/system-prompt';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'agents-md-'));
});
afterEach(() => rm(root, { recursive: true, force: true }));

async function put(relative: string, text: string): Promise<void> {
  await mkdir(path.dirname(path.join(root, relative)), { recursive: true });
  await writeFile(path.join(root, relative), text);
}

test('AGENTS.md files are read from the root down to the workspace, outermost first, missing ones skipped', async () => {
  await put('AGENTS.md', 'root rules');
  await put('team/AGENTS.md', '  \n');
  await put('team/app/AGENTS.md', 'app rules\n');
  await mkdir(path.join(root, 'team/app/src'), { recursive: true });
  const files = await readAgentsFiles(path.join(root, 'team/app/src'), root);
  expect(files).toEqual([
    { path: path.join(root, 'AGENTS.md'), text: 'root rules' },
    { path: path.join(root, 'team/app/AGENTS.md'), text: 'app rules' },
  ]);
});

test("a workspace outside the root reads only its own AGENTS.md, not its parents'", async () => {
  await put('AGENTS.md', 'parent rules');
  await put('elsewhere/AGENTS.md', 'own rules');
  const files = await readAgentsFiles(path.join(root, 'elsewhere'), path.join(root, 'worker-root'));
  expect(files).toEqual([{ path: path.join(root, 'elsewhere/AGENTS.md'), text: 'own rules' }]);
});

test('together the files are cut to the limit, with a note saying so', async () => {
  await put('AGENTS.md', 'a'.repeat(60));
  await put('ws/AGENTS.md', 'b'.repeat(60));
  const files = await readAgentsFiles(path.join(root, 'ws'), root, 100);
  expect(files[0]).toEqual({ path: path.join(root, 'AGENTS.md'), text: 'a'.repeat(60) });
  expect(files[1]).toHaveProperty(
    'text',
    expect.stringMatching(/^b{40}\n\[… cut: the AGENTS\.md files are limited to 100 characters together\]$/),
  );
});

test('the default prompt states the workspace, the day, the platform, what asks, exec limits, when to stop, and AGENTS.md', async () => {
  await put('AGENTS.md', 'Run npm test before you say you are done.');
  const compose = createComposeSystemPrompt({
    defaultWorkspace: root,
    now: () => new Date(Date.UTC(2026, 10, 28, 23, 59)),
  });
  const prompt = await compose({
    tools: [
      { name: 'read', asks: false },
      { name: 'write', asks: true },
      { name: 'exec', asks: true },
    ],
    approvalTimeoutMs: 2 * 3_600_000,
  });
  expect(prompt).toContain(`Workspace: ${root}. Paths you give tools are relative to it`);
  expect(prompt).toContain(`Date: 2026-11-28 (Saturday, UTC). Platform: ${os.platform()} ${os.arch()}.`);
  expect(prompt).toContain(
    "Calls to write, exec wait for a person's approval before they run (a person has 2 h to decide).",
  );
  expect(prompt).toContain('A rejected call comes back with the reason as its result');
  expect(prompt).toContain('exec stops a command after its timeout (120 s');
  expect(prompt).toContain('# When to stop');
  expect(prompt).toMatch(
    new RegExp(`## ${path.join(root, 'AGENTS.md')}\\n\\nRun npm test before you say you are done\\.$`),
  );
  // The same day sends the same bytes: the prefix a provider caches holds across a day's runs.
  expect(
    await compose({
      tools: [
        { name: 'read', asks: false },
        { name: 'write', asks: true },
        { name: 'exec', asks: true },
      ],
      approvalTimeoutMs: 7_200_000,
    }),
  ).toBe(prompt);
});

test('without tools that ask or exec, the prompt says nothing about approvals or timeouts', async () => {
  const prompt = await createComposeSystemPrompt({ defaultWorkspace: root })({
    workspace: path.join(root, 'ws'),
    tools: [{ name: 'read', asks: false }],
  });
  expect(prompt).toContain(`Workspace: ${path.join(root, 'ws')}.`);
  expect(prompt).not.toMatch(/approval|exec|AGENTS\.md/);
});

test('an appended prompt follows the given one after a blank line, or stands alone', () => {
  expect(withAppendedPrompt('base', 'more')).toBe('base\n\nmore');
  expect(withAppendedPrompt(undefined, 'more')).toBe('more');
  expect(withAppendedPrompt('base', undefined)).toBe('base');
});
