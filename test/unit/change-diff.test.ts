import { changeDiff } from '../../src/console/change-diff';

const shown = (toolName: string, args: unknown) => changeDiff(toolName, JSON.stringify(args)).text;

test('an edit shows the text it takes out and the text it puts in, escaped', () => {
  const html = shown('edit', { path: 'src/a.ts', old_string: 'let a = 1;', new_string: 'let a = "<b>";' });
  expect(html).toContain('src/a.ts');
  expect(html).toContain('<span class="removed">- let a = 1;</span>');
  expect(html).toContain('<span class="added">+ let a = &quot;&lt;b&gt;&quot;;</span>');
});

test('a write whose old text is unknown says so; a patch shows each file it touches', () => {
  expect(shown('write', { path: 'notes.md', content: 'one\ntwo\n' })).toContain(
    '(new file, or its old text unknown)',
  );
  const patch = ['--- a/x.txt', '+++ b/x.txt', '@@ -1,2 +1,2 @@', ' keep', '-old', '+new', ''].join('\n');
  const html = shown('apply_patch', { patch });
  expect(html).toContain('x.txt');
  expect(html).toContain('<span class="removed">- old</span>');
  expect(html).toContain('<span class="added">+ new</span>');
});

test('other tools and arguments that are not an object show no diff', () => {
  expect(shown('exec', { command: 'ls' })).toBe('');
  expect(changeDiff('edit', 'not json').text).toBe('');
  expect(changeDiff('edit', '[1]').text).toBe('');
});
