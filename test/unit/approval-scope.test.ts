import { approvalSubject, hostOf } from '../../src/workflows/approval-scope';
import type { ToolDescriptor } from '../../src/shared/tool-descriptor';
import { builtinTools } from '../../src/tools/builtin/builtin-tools';
import { ToolRegistry } from '../../src/tools/registry';
import { createWebFetchTool } from '../../src/tools/builtin/web-fetch';

const registry = new ToolRegistry([
  ...builtinTools().filter((tool) => tool.name !== 'web_fetch'),
  createWebFetchTool({ allowHosts: ['docs.python.org'] }),
]);
const tools = new Map<string, ToolDescriptor>(registry.descriptors().map((d) => [d.name, d]));

describe('hostOf reads a URL as the fetch will', () => {
  test.each([
    ['https://Docs.Python.org./3/', 'docs.python.org'],
    ['http://docs.python.org:8080/x', 'docs.python.org'],
    ['http://user:pw@evil.example/x', 'evil.example'],
    ['http://docs.python.org@evil.example/', 'evil.example'],
    ['http://evil.example\\@docs.python.org/', 'evil.example'],
    ['http://evil.example#@docs.python.org', 'evil.example'],
    ['http://docs%2epython%2eorg/', 'docs.python.org'],
    ['http://[::1]:9/', '[::1]'],
  ])('%s -> %s', (url, host) => expect(hostOf(url)).toBe(host));

  test.each(['file:///etc/passwd', 'not a url', '', 'javascript:alert(1)'])('%s has no host', (url) =>
    expect(hostOf(url)).toBeUndefined(),
  );
});

describe('approvalSubject', () => {
  test('web_fetch: an allowed host runs freely; another asks, and standing decisions hold per host', () => {
    expect(approvalSubject('web_fetch', { url: 'https://docs.python.org/3/' }, tools, {})).toEqual({
      mode: 'auto',
      scope: 'web_fetch@docs.python.org',
    });
    expect(approvalSubject('web_fetch', { url: 'https://evil.example/?q=secret' }, tools, {})).toEqual({
      mode: 'ask',
      scope: 'web_fetch@evil.example',
    });
    expect(
      approvalSubject('web_fetch', { url: 'http://docs.python.org@evil.example/' }, tools, {}).scope,
    ).toBe('web_fetch@evil.example');
  });

  test('web_fetch: a URL the tool cannot fetch runs to be refused; a conversation may still choose auto', () => {
    for (const url of ['gopher://x', 'file:///etc/passwd', 'not a url', 42])
      expect(approvalSubject('web_fetch', { url }, tools, { mode: 'ask' })).toEqual({
        mode: 'auto',
        scope: 'web_fetch@?',
      });
    expect(approvalSubject('web_fetch', { url: 'https://evil.example/' }, tools, { mode: 'auto' }).mode).toBe(
      'auto',
    );
  });

  test('process write asks as exec does, under exec’s standing decisions; other actions are the tool’s own', () => {
    expect(approvalSubject('process', { action: 'write', id: 'p1', input: 'x' }, tools, {})).toEqual({
      mode: 'ask',
      scope: 'exec',
    });
    expect(approvalSubject('process', { action: 'write' }, tools, { tools: { exec: 'always' } }).mode).toBe(
      'always',
    );
    expect(approvalSubject('process', { action: 'poll', id: 'p1' }, tools, {})).toEqual({
      mode: 'auto',
      scope: 'process',
    });
  });

  test('every other tool: its own mode, standing decisions per tool', () => {
    expect(approvalSubject('write', { path: 'a' }, tools, {})).toEqual({ mode: 'ask', scope: 'write' });
    expect(approvalSubject('read', { path: 'a' }, tools, {})).toEqual({ mode: 'auto', scope: 'read' });
  });
});
