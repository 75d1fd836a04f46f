import { randomUUID } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ask } from '../support/ask';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import type { ChatRequest } from '../support/scripted-model';

const harness = useNockedHarness([]);

const toolResult = (request: ChatRequest, toolCallId: string) =>
  request.messages.find((message) => message.role === 'tool' && message.tool_call_id === toolCallId)?.content;

const patchFor = (bOld: string) =>
  [
    '--- a/patch-it/a.txt',
    '+++ b/patch-it/a.txt',
    '@@ -1,2 +1,2 @@',
    ' alpha',
    '-beta',
    '+BETA',
    '--- a/patch-it/b.txt',
    '+++ b/patch-it/b.txt',
    '@@ -1 +1 @@',
    `-${bOld}`,
    '+GAMMA',
    '--- /dev/null',
    '+++ b/patch-it/c.txt',
    '@@ -0,0 +1 @@',
    '+new file',
    '',
  ].join('\n');

test('apply_patch through a conversation: a patch with one bad hunk changes nothing, the corrected one changes every file', async () => {
  const dir = path.join(harness().workspace, 'patch-it');
  await mkdir(dir);
  await writeFile(path.join(dir, 'a.txt'), 'alpha\nbeta\n');
  await writeFile(path.join(dir, 'b.txt'), 'gamma\n');
  const onDisk = () => ({
    a: readFileSync(path.join(dir, 'a.txt'), 'utf8'),
    b: readFileSync(path.join(dir, 'b.txt'), 'utf8'),
  });
  let seenAfterFailure: unknown;

  const script = nockModel([
    // b.txt's hunk expects a line the file does not have.
    { toolCalls: [{ id: 'call_bad', name: 'apply_patch', arguments: { patch: patchFor('delta') } }] },
    (request) => {
      // What is on disk at the moment the model reads the failure.
      seenAfterFailure = { files: onDisk(), entries: readdirSync(dir).sort() };
      expect(toolResult(request, 'call_bad')).toBeDefined();
      return {
        toolCalls: [{ id: 'call_good', name: 'apply_patch', arguments: { patch: patchFor('gamma') } }],
      };
    },
    { text: 'Patched.' },
  ]);
  const id = `conv-${randomUUID()}`;
  const { finished } = await ask(harness().agent, id, 'Apply the patch', {
    options: { approval: { mode: 'auto' } },
  });
  expect(finished).toMatchObject({ outcome: 'answered', answer: 'Patched.' });

  const failure = JSON.parse(toolResult(script.requests[1]!, 'call_bad') as string) as Record<string, string>;
  expect(failure).toMatchObject({ status: 'error', tool: 'apply_patch' });
  expect(failure.error).toContain('hunk 1 (@@ -1 +1 @@) of patch-it/b.txt does not match the file');
  expect(failure.error).toContain('no file was changed');
  expect(seenAfterFailure).toEqual({
    files: { a: 'alpha\nbeta\n', b: 'gamma\n' },
    entries: ['a.txt', 'b.txt'],
  });

  expect(toolResult(script.requests[2]!, 'call_good')).toBe(
    'Applied the patch to 3 file(s):\nM patch-it/a.txt (+1 -1)\nM patch-it/b.txt (+1 -1)\nA patch-it/c.txt (+1 -0)',
  );
  expect(await readFile(path.join(dir, 'a.txt'), 'utf8')).toBe('alpha\nBETA\n');
  expect(await readFile(path.join(dir, 'b.txt'), 'utf8')).toBe('GAMMA\n');
  expect(await readFile(path.join(dir, 'c.txt'), 'utf8')).toBe('new file\n');
  expect((await readdir(dir)).sort()).toEqual(['a.txt', 'b.txt', 'c.txt']);

  const transcript = (await harness().agent.state(id)).transcript;
  const results = transcript.filter((message) => message.role === 'toolResult');
  expect(results.map((message) => [message.toolCallId, message.isError])).toEqual([
    ['call_bad', true],
    ['call_good', false],
  ]);
});
