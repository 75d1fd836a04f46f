import { promptOf } from '../../src/acp/acp-agent';
import { promptResponseOf, refusalNotice } from '../../src/acp/session-follower';
import { toolCallView } from '../../src/acp/tool-call-view';

const cwd = '/home/ann/project';

test('file tools show as edits with diffs made from their arguments, paths made absolute', () => {
  expect(toolCallView('write', { path: 'a.txt', content: 'new\n' }, cwd, 'old\n')).toEqual({
    title: 'Write a.txt',
    kind: 'edit',
    locations: [{ path: '/home/ann/project/a.txt' }],
    diffs: [{ type: 'diff', path: '/home/ann/project/a.txt', oldText: 'old\n', newText: 'new\n' }],
  });
  expect(toolCallView('edit', { path: 'src/x.ts', old_string: 'a', new_string: 'b' }, cwd).diffs).toEqual([
    { type: 'diff', path: '/home/ann/project/src/x.ts', oldText: 'a', newText: 'b' },
  ]);
});

test('a patch shows each file it changes, added files with no old text', () => {
  const patch = [
    '--- a/keep.txt',
    '+++ b/keep.txt',
    '@@ -1,2 +1,2 @@',
    ' same',
    '-before',
    '+after',
    '--- /dev/null',
    '+++ b/new.txt',
    '@@ -0,0 +1 @@',
    '+fresh',
    '',
  ].join('\n');
  const view = toolCallView('apply_patch', { patch }, cwd);
  expect(view.title).toBe('Patch keep.txt, new.txt');
  expect(view.diffs).toEqual([
    { type: 'diff', path: '/home/ann/project/keep.txt', oldText: 'same\nbefore\n', newText: 'same\nafter\n' },
    { type: 'diff', path: '/home/ann/project/new.txt', oldText: null, newText: 'fresh\n' },
  ]);
});

test('other tools get the kind ACP has for them and a title a person reads', () => {
  expect(toolCallView('exec', { command: 'npm test' }, cwd)).toMatchObject({
    title: 'Run npm test',
    kind: 'execute',
  });
  expect(toolCallView('read', { path: 'README.md', offset: 10 }, cwd)).toMatchObject({
    kind: 'read',
    locations: [{ path: '/home/ann/project/README.md', line: 10 }],
  });
  expect(toolCallView('grep', { pattern: 'TODO' }, cwd)).toMatchObject({ kind: 'search' });
  expect(toolCallView('web_fetch', { url: 'https://example.com' }, cwd)).toMatchObject({ kind: 'fetch' });
  expect(toolCallView('memory_save', {}, cwd)).toMatchObject({ title: 'memory_save', kind: 'other' });
});

test('a prompt becomes one message: text as it is, embedded files quoted, links named, images attached', () => {
  expect(
    promptOf([
      { type: 'text', text: 'Look at this file' },
      { type: 'resource', resource: { uri: 'file:///p/a.ts', text: 'const a = 1;' } },
      { type: 'resource_link', uri: 'file:///p/b.ts', name: 'b.ts' },
    ]),
  ).toEqual({
    text: 'Look at this file\n\nContents of file:///p/a.ts:\n```\nconst a = 1;\n```\n\n[b.ts](file:///p/b.ts)',
    images: [],
  });
  expect(() => promptOf([{ type: 'text', text: '  ' }])).toThrow(/no text/);
  expect(promptOf([{ type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }])).toEqual({
    text: '(see the attached image)',
    images: [{ type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }],
  });
  const tooMany = Array.from({ length: 9 }, () => ({
    type: 'image' as const,
    data: 'AA==',
    mimeType: 'image/png',
  }));
  expect(() => promptOf(tooMany)).toThrow(/at most 8 images/);
});

test("a refused run ends the prompt turn with ACP's refusal, the provider's words in _meta and in the notice shown", () => {
  const finished = {
    type: 'run_finished' as const,
    seq: 9,
    at: 0,
    run: 2,
    messageIds: ['m'],
    outcome: 'refused' as const,
    answer: '',
    refusal: 'Declined: it could enable cyber harm.',
  };
  expect(promptResponseOf(finished)).toEqual({
    stopReason: 'refusal',
    _meta: { 'durable-agent/refusal': 'Declined: it could enable cyber harm.' },
  });
  expect(refusalNotice(finished)).toContain(
    "The model's provider refused to answer: Declined: it could enable cyber harm.",
  );
  const { refusal: _words, ...withoutWords } = finished;
  expect(promptResponseOf(withoutWords)).toEqual({ stopReason: 'refusal' });
  expect(promptResponseOf({ ...finished, outcome: 'answered', refusal: undefined })).toEqual({
    stopReason: 'end_turn',
  });
});
