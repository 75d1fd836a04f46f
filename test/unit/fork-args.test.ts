import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseForkArgs } from '../../src/cli/commands/fork';
import { UsageError } from '../../src/cli/usage-error';

test('fork ID --at N [--id NEW]: the run, the source and the new id', () => {
  expect(parseForkArgs(['conv-a', '--at', '2', '--id', 'conv-b'])).toEqual({
    source: { conversationId: 'conv-a' },
    atRun: 2,
    newId: 'conv-b',
    json: false,
  });
  expect(parseForkArgs(['conv-a', '--at', '1', '--workspace', '/w', '--json'])).toEqual({
    source: { conversationId: 'conv-a' },
    atRun: 1,
    workspace: '/w',
    json: true,
  });
});

test('a path that exists is a history file; one that looks like a file and does not exist is an error', async () => {
  const file = path.join(await mkdtemp(path.join(os.tmpdir(), 'fork-args-')), 'history.json');
  await writeFile(file, '{}');
  expect(parseForkArgs([file, '--at', '3']).source).toEqual({ file });
  expect(() => parseForkArgs(['/nowhere/history.json', '--at', '3'])).toThrow(
    'no such history file: /nowhere/history.json',
  );
});

test('--at is required and a whole number of at least 1; ids are checked: usage errors', () => {
  expect(() => parseForkArgs(['conv-a'])).toThrow(new UsageError('fork needs --at N: the run to fork at'));
  for (const at of ['0', '-1', '2.5', 'two']) {
    expect(() => parseForkArgs(['conv-a', '--at', at])).toThrow(UsageError);
  }
  expect(() => parseForkArgs(['conv-a', '--at', '1', '--id', 'bad id'])).toThrow(UsageError);
});
