import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Message } from '../../src/shared/messages';
import { sandboxAvailability } from '../../src/tools/exec/bubblewrap';
import { ask } from '../support/ask';
import { inCi } from '../support/in-ci';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { filesHolding, snapshot } from '../support/directory-contents';
import { swapperCommand } from '../support/path-swapper';
import { type ChatRequest, type ScriptedToolCall, toolResultIn } from '../support/scripted-model';

/**
 * The attack the file-tool race stands for, end to end through a real worker: a prompt-injected
 * model starts a sandboxed background command that keeps swapping a workspace directory for a link
 * to a directory outside, then calls every file tool many times over while it runs. The file tools
 * run in the worker, outside the sandbox, so only their own walk keeps them inside.
 */
jest.setTimeout(300_000);

const sandbox = sandboxAvailability();
if (!sandbox.ok && inCi()) throw new Error(`bubblewrap is required in CI: ${sandbox.reason}`);
const whenSandboxed = sandbox.ok ? test : test.skip;
if (!sandbox.ok) console.warn(`the sandboxed race is skipped: ${sandbox.reason}`);

const SECRET = `OUTSIDE-SECRET-${randomUUID()}`;
const TURNS = 6;
const harness = useNockedHarness([]);
let outside: string;

beforeAll(async () => {
  outside = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-race-outside-'));
  await writeFile(path.join(outside, 'target.txt'), `inside ${SECRET}\n`);
  await writeFile(path.join(outside, 'only-outside.txt'), `${SECRET}\n`);
});

afterAll(async () => {
  await rm(outside, { recursive: true, force: true });
});

/** One turn's calls: every file tool, several times, all at once. */
function fileToolCalls(turn: number): ScriptedToolCall[] {
  const calls: Array<[string, Record<string, unknown>]> = [];
  for (let i = 0; i < 5; i++) {
    calls.push(['read', { path: 'race/sub/target.txt' }]);
    calls.push(['write', { path: `race/sub/new-${turn}-${i}.txt`, content: 'inside\n' }]);
    calls.push(['edit', { path: 'race/sub/target.txt', old_string: 'inside', new_string: 'inside' }]);
    calls.push([
      'apply_patch',
      { patch: `--- /dev/null\n+++ b/race/sub/added-${turn}-${i}.txt\n@@ -0,0 +1 @@\n+added\n` },
    ]);
    calls.push(['list_directory', { path: 'race/sub' }]);
    calls.push(['glob', { pattern: '**/*.txt', path: 'race' }]);
    calls.push(['grep', { pattern: 'SECRET|inside', path: 'race/sub' }]);
  }
  return calls.map(([name, args], index) => ({ id: `call_${turn}_${index}`, name, arguments: args }));
}

whenSandboxed('a sandboxed command swapping directories cannot lead the file tools outside', async () => {
  const workspace = harness().workspace;
  const race = path.join(workspace, 'race');
  await mkdir(path.join(race, 'sub'), { recursive: true });
  await writeFile(path.join(race, 'sub', 'target.txt'), 'inside\n');
  const outsideBefore = await snapshot(outside);
  const swapper = swapperCommand(path.join(race, 'sub'), path.join(race, '.sub-aside'), outside);
  nockModel([
    { toolCalls: [{ id: 'call_swap', name: 'exec', arguments: { command: swapper, background: true } }] },
    ...Array.from({ length: TURNS }, (_, turn) => ({ toolCalls: fileToolCalls(turn) })),
    (request: ChatRequest) => {
      const started = /background process (\S+)/.exec(toolResultIn(request, 'call_swap'));
      return {
        toolCalls: [{ id: 'call_stop', name: 'process', arguments: { action: 'kill', id: started?.[1] } }],
      };
    },
    { text: 'done' },
  ]);
  const id = `conv-race-${randomUUID()}`;
  const { finished } = await ask(harness().agent, id, 'race the file tools', {
    options: { execSecurity: 'sandbox', approval: { mode: 'auto' } },
  });
  expect(finished.outcome).toBe('answered');
  const results = (await harness().agent.state(id)).transcript.filter(
    (message): message is Extract<Message, { role: 'toolResult' }> => message.role === 'toolResult',
  );
  const texts = results.map((message) =>
    message.content.map((block) => (block.type === 'text' ? block.text : '')).join(''),
  );
  // Every call was answered, the swapping command was running, and nothing from outside came back.
  expect(results).toHaveLength(2 + TURNS * fileToolCalls(0).length);
  expect(texts[0]).toContain('started background process');
  expect({ killed: texts.at(-1), isError: results.at(-1)!.isError }).toMatchObject({ isError: false });
  expect(texts.filter((text) => text.includes(SECRET) || text.includes('only-outside'))).toEqual([]);
  expect(await snapshot(outside)).toBe(outsideBefore);
  expect(await filesHolding(race, SECRET)).toEqual([]);
});
