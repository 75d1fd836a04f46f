import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { assertCliBuilt, runCli } from '../support/cli-process';
import type { ChatRequest } from '../support/scripted-model';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';
import { type TestHarness, startHarness } from '../support/test-worker';
import { waitForEvent } from '../support/wait-for-event';

// A conversation that sets no system prompt gets the worker's default, written at each run's start
// with the AGENTS.md files from the worker's workspace down to the conversation's; it is recorded
// in the run, so `history --at` shows what the model was told.

let model: ScriptedModelServer;
let harness: TestHarness;
let env: NodeJS.ProcessEnv;
let project: string;

beforeAll(async () => {
  assertCliBuilt();
  model = await startScriptedModelServer([
    { text: 'First answer.' },
    { text: 'Second answer.' },
    { text: 'Answer from the command line.' },
    { text: 'Answer with my own prompt.' },
  ]);
  harness = await startHarness({ modelBaseUrl: model.baseUrl });
  env = {
    ...process.env,
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS,
    AGENT_TASK_QUEUE: harness.taskQueue,
  };
  project = path.join(harness.workspace, 'team', 'app');
  await mkdir(project, { recursive: true });
  await writeFile(path.join(harness.workspace, 'AGENTS.md'), 'Company rule: never push to main.\n');
  await writeFile(path.join(project, 'AGENTS.md'), 'Run npm test before you say you are done.\n');
});

afterAll(async () => {
  await harness?.close();
  await model?.close();
});

const systemOf = (request: ChatRequest) =>
  request.messages[0]?.role === 'system' ? String(request.messages[0].content) : undefined;

test('the default prompt names the workspace and carries its AGENTS.md files, outermost first; history --at 1 shows it', async () => {
  const id = `conv-${randomUUID()}`;
  const handle = harness.client.workflow.getHandle(id);
  await harness.agent.send(id, 'What are the rules here?', { options: { workspace: project } });
  await waitForEvent(handle, 'run_finished', (event) => event.run === 1);
  await harness.agent.send(id, 'And again?');
  await waitForEvent(handle, 'run_finished', (event) => event.run === 2);

  const [first, second] = model.script.requests.slice(0, 2).map(systemOf);
  expect(first).toContain(`Workspace: ${project}.`);
  expect(first).toMatch(/Date: \d{4}-\d{2}-\d{2} \(\w+day, UTC\)\. Platform: /);
  expect(first).toContain('# When to stop');
  const rootRule = first!.indexOf('Company rule: never push to main.');
  const projectRule = first!.indexOf('Run npm test before you say you are done.');
  expect(rootRule).toBeGreaterThan(0);
  expect(projectRule).toBeGreaterThan(rootRule);
  // A second run the same day sends the same bytes (the prefix a provider caches holds), and the
  // worker wrote it once.
  expect(second).toBe(first);
  const written = ((await handle.fetchHistory()).events ?? []).filter(
    (event) =>
      Buffer.from(event.userMetadata?.summary?.data ?? []).toString() ===
      '"system prompt: the worker writes the default one"',
  );
  expect(written).toHaveLength(1);

  const history = await runCli(['history', id, '--at', '1'], env);
  expect(history.stderr).toBe('');
  expect(history.code).toBe(0);
  expect(history.stdout).toContain(`\n  system:\n    You are an agent working for a person through tools.`);
  expect(history.stdout).toContain(`\n    - Workspace: ${project}.`);
  expect(history.stdout).toContain('\n    Run npm test before you say you are done.\n');
});

test('run --append-system-prompt adds to the default; --system-prompt replaces it', async () => {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'prompt-files-'));
  await writeFile(path.join(directory, 'extra.md'), 'Answer in French.');
  await writeFile(path.join(directory, 'own.md'), 'You are a terse reviewer.');

  const appended = await runCli(
    [
      'run',
      '--no-worker',
      '--workspace',
      project,
      '--append-system-prompt',
      path.join(directory, 'extra.md'),
      'Hi',
    ],
    env,
  );
  expect(appended).toMatchObject({ code: 0, stdout: 'Answer from the command line.\n' });
  const withDefault = systemOf(model.script.requests[2]!)!;
  expect(withDefault).toMatch(/^You are an agent working for a person through tools\./);
  expect(withDefault).toMatch(/Run npm test before you say you are done\.\n\nAnswer in French\.$/);

  const own = await runCli(
    [
      'run',
      '--no-worker',
      '--workspace',
      project,
      '--system-prompt',
      path.join(directory, 'own.md'),
      '--append-system-prompt',
      path.join(directory, 'extra.md'),
      'Hi',
    ],
    env,
  );
  expect(own).toMatchObject({ code: 0, stdout: 'Answer with my own prompt.\n' });
  expect(systemOf(model.script.requests[3]!)).toBe('You are a terse reviewer.\n\nAnswer in French.');
});
