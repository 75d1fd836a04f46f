import { readdir, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { MemoryEntry } from '../../src/tools/builtin/memory';
import { rankByRelevance, wordsOf } from '../../src/tools/builtin/memory-ranking';
import { MemoryFullError, MemoryStore } from '../../src/tools/builtin/memory-store';
import { createMemoryTools } from '../../src/tools/builtin/memory-tools';
import type { AgentTool, ToolResult } from '../../src/tools/tool';
import { Workspace } from '../../src/tools/workspace';
import { makeTempDir, removeDir, resultText, toolErrorOf } from './tool-harness';

let root: string;
let store: MemoryStore;
beforeEach(async () => {
  root = await makeTempDir('durable-agent-memory-');
  store = new MemoryStore(root, { maxEntries: 5, maxTextBytes: 100 });
});
afterEach(() => removeDir(root));

const note = (key: string, text: string, tags: string[] = []) => ({ key, text, tags });

describe('MemoryStore', () => {
  test('put then get returns the note; a new store on the same directory still has it', async () => {
    const { entry, replaced } = await store.put('agent-1', note('prefs', 'likes teal', ['colour']));
    expect(replaced).toBe(false);
    expect(await store.get('agent-1', 'prefs')).toEqual(entry);
    expect(await new MemoryStore(root).get('agent-1', 'prefs')).toEqual(entry);
  });

  test('writing a key again replaces the note and keeps its creation time', async () => {
    const first = await store.put('a', note('k', 'one'), new Date('2024-01-01T00:00:00Z'));
    const second = await store.put('a', note('k', 'two'), new Date('2024-02-01T00:00:00Z'));
    expect(second.replaced).toBe(true);
    expect(second.entry).toMatchObject({ text: 'two', createdAt: first.entry.createdAt });
    expect(second.entry.updatedAt).toBe('2024-02-01T00:00:00.000Z');
    expect(await store.all('a')).toHaveLength(1);
  });

  test('agents do not see each other’s notes', async () => {
    await store.put('alice', note('k', 'for alice'));
    expect(await store.get('bob', 'k')).toBeUndefined();
    expect(await store.all('bob')).toEqual([]);
  });

  test('keys of any shape are safe file names; nothing is written outside the agent directory', async () => {
    const keys = ['../../escape', '/etc/passwd', 'CaseSensitive', 'casesensitive', 'with space', 'ünï'];
    const roomy = new MemoryStore(root);
    for (const key of keys) await roomy.put('a', note(key, key));
    for (const key of keys) expect((await roomy.get('a', key))?.text).toBe(key);
    expect(await readdir(root)).toEqual(['a']);
    const files = await readdir(path.join(root, 'a'));
    expect(files).toHaveLength(keys.length);
    for (const file of files) expect(file).toMatch(/^[0-9a-f]{40}\.json$/);
  });

  test.each(['..', '../x', 'a/b', '', 'a.b', 'x'.repeat(65), 'nul\u0000'])(
    'agent id %j is refused',
    async (agentId) => {
      await expect(store.put(agentId, note('k', 't'))).rejects.toThrow(/agent id/);
    },
  );

  test('a note over the byte limit is refused', async () => {
    await expect(store.put('a', note('k', 'é'.repeat(51)))).rejects.toBeInstanceOf(RangeError);
  });

  test('at maxEntries a new note is refused but existing ones can be replaced', async () => {
    for (let index = 0; index < 5; index++) await store.put('a', note(`k${index}`, 'x'));
    await expect(store.put('a', note('k5', 'x'))).rejects.toBeInstanceOf(MemoryFullError);
    await expect(store.put('a', note('k0', 'replaced'))).resolves.toMatchObject({ replaced: true });
  });

  test('no temporary files are left behind, and damaged or foreign files are skipped', async () => {
    await store.put('a', note('k', 'x'));
    await writeFile(path.join(root, 'a', `${'0'.repeat(40)}.json`), '{not json');
    await writeFile(path.join(root, 'a', 'README'), 'foreign');
    expect((await readdir(path.join(root, 'a'))).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    expect((await store.all('a')).map((entry) => entry.key)).toEqual(['k']);
  });

  test('parallel writes of different keys are all kept', async () => {
    const big = new MemoryStore(root);
    await Promise.all(Array.from({ length: 20 }, (_, index) => big.put('a', note(`k${index}`, `v${index}`))));
    expect((await big.all('a')).map((entry) => entry.key).sort()).toHaveLength(20);
  });

  test('an agent with no directory yet has no notes', async () => {
    await mkdir(path.join(root, 'other'));
    expect(await store.all('nobody')).toEqual([]);
  });
});

describe('rankByRelevance', () => {
  const entry = (key: string, text: string, tags: string[] = [], updatedAt = '2024-01-01'): MemoryEntry => ({
    key,
    text,
    tags,
    createdAt: updatedAt,
    updatedAt,
  });

  test('words are lower-cased runs of letters and digits in any script', () => {
    expect(wordsOf('Hello, Wörld! 42 café-au-lait 東京')).toEqual([
      'hello',
      'wörld',
      '42',
      'café',
      'au',
      'lait',
      '東京',
    ]);
  });

  test('notes sharing no word are left out; more matching words rank higher', () => {
    const ranked = rankByRelevance(
      [
        entry('a', 'the deploy uses blue green switching'),
        entry('b', 'the user prefers tea'),
        entry('c', 'deploy on fridays is forbidden; deploy windows are tuesdays'),
      ],
      'deploy windows',
    );
    expect(ranked.map((item) => item.entry.key)).toEqual(['c', 'a']);
    expect(ranked[0]!.score).toBeGreaterThan(ranked[1]!.score);
  });

  test('rare words weigh more than common ones', () => {
    const ranked = rankByRelevance(
      [
        entry('a', 'project alpha notes'),
        entry('b', 'project beta notes'),
        entry('c', 'project zeta kubernetes'),
      ],
      'project kubernetes',
    );
    expect(ranked[0]!.entry.key).toBe('c');
  });

  test('a word in the key or tags counts more than in the text', () => {
    const ranked = rankByRelevance(
      [
        entry('misc', 'a note mentioning billing once among many other words here'),
        entry('x', 'short', ['billing']),
      ],
      'billing',
    );
    expect(ranked[0]!.entry.key).toBe('x');
  });

  test('ties go to the most recently updated note; no words means no results', () => {
    const ranked = rankByRelevance(
      [entry('old', 'same text', [], '2024-01-01'), entry('new', 'same text', [], '2024-06-01')],
      'text',
    );
    expect(ranked.map((item) => item.entry.key)).toEqual(['new', 'old']);
    expect(rankByRelevance([entry('a', 'x')], '!!!')).toEqual([]);
  });
});

describe('memory tools', () => {
  let tools: Map<string, AgentTool>;
  const workspace = new Workspace(process.cwd());
  beforeEach(() => {
    tools = new Map(createMemoryTools(new MemoryStore(root)).map((tool) => [tool.name, tool]));
  });

  const call = (
    name: string,
    args: unknown,
    context: { agentId?: string; conversationId?: string; toolCallId?: string } = {},
  ): Promise<ToolResult> => {
    const tool = tools.get(name)!;
    return tool.execute(
      context.toolCallId ?? 'call_1',
      tool.parameters.parse(args),
      new AbortController().signal,
      () => {},
      {
        workspace,
        conversationId: context.conversationId ?? 'conv-1',
        agentId: context.agentId ?? 'agent-1',
      },
    );
  };
  const json = (result: ToolResult) => JSON.parse(resultText(result));

  test('write, search and get a note', async () => {
    expect(
      json(await call('memory_write', { key: 'prefs', text: 'The user likes teal.', tags: ['colour'] })),
    ).toMatchObject({
      saved: 'prefs',
      replaced: false,
    });
    await call('memory_write', { key: 'other', text: 'Deploys happen on Tuesdays.' });
    const found = json(await call('memory_search', { query: 'what colour does the user like' }));
    expect(found.notes).toBe(2);
    expect(found.results[0]).toMatchObject({
      key: 'prefs',
      snippet: 'The user likes teal.',
      tags: ['colour'],
    });
    expect(json(await call('memory_get', { key: 'prefs' }))).toMatchObject({
      key: 'prefs',
      text: 'The user likes teal.',
      conversationId: 'conv-1',
    });
  });

  test('memory belongs to the agent, whichever conversation asks', async () => {
    await call(
      'memory_write',
      { key: 'k', text: 'shared fact' },
      { conversationId: 'conv-a', agentId: 'team' },
    );
    expect(
      json(await call('memory_get', { key: 'k' }, { conversationId: 'conv-b', agentId: 'team' })).text,
    ).toBe('shared fact');
    const error = await toolErrorOf(call('memory_get', { key: 'k' }, { agentId: 'someone-else' }));
    expect(error.kind).toBe('FileNotFound');
  });

  test('without a key the note is named after the tool call: a retry rewrites the same note', async () => {
    const first = json(await call('memory_write', { text: 'one' }, { toolCallId: 'call_7' }));
    const again = json(await call('memory_write', { text: 'one' }, { toolCallId: 'call_7' }));
    const otherConversation = json(
      await call('memory_write', { text: 'one' }, { toolCallId: 'call_7', conversationId: 'conv-2' }),
    );
    expect(first.saved).toMatch(/^note-[0-9a-f]{12}$/);
    expect(again).toMatchObject({ saved: first.saved, replaced: true });
    expect(otherConversation.saved).not.toBe(first.saved);
  });

  test('search honours limit and tag, and says when the query has no words', async () => {
    for (let index = 0; index < 6; index++) {
      await call('memory_write', {
        key: `k${index}`,
        text: `apple number ${index}`,
        tags: index % 2 ? ['odd'] : [],
      });
    }
    expect(json(await call('memory_search', { query: 'apple' })).results).toHaveLength(5);
    expect(json(await call('memory_search', { query: 'apple', limit: 2 })).results).toHaveLength(2);
    const odd = json(await call('memory_search', { query: 'apple', tag: 'odd' })).results;
    expect(odd.map((result: { key: string }) => result.key).sort()).toEqual(['k1', 'k3', 'k5']);
    expect((await toolErrorOf(call('memory_search', { query: '?!' }))).kind).toBe('InvalidArgs');
  });

  test('long notes are found by a snippet around the match', async () => {
    const text = `${'filler '.repeat(100)}the secret word is pineapple ${'tail '.repeat(100)}`;
    await call('memory_write', { key: 'long', text });
    const [result] = json(await call('memory_search', { query: 'pineapple' })).results;
    expect(result.snippet).toContain('pineapple');
    expect(result.snippet.length).toBeLessThan(310);
    expect(result.snippet.startsWith('…')).toBe(true);
  });

  test('limits: text too long, too many tags, control characters in keys', async () => {
    const small = new Map(
      createMemoryTools(new MemoryStore(root, { maxEntries: 1, maxTextBytes: 10 })).map((tool) => [
        tool.name,
        tool,
      ]),
    );
    tools = small;
    expect((await toolErrorOf(call('memory_write', { key: 'k', text: 'x'.repeat(11) }))).kind).toBe(
      'InvalidArgs',
    );
    await call('memory_write', { key: 'k', text: 'ok' });
    const full = await toolErrorOf(call('memory_write', { key: 'k2', text: 'ok' }));
    expect(full.message).toMatch(/memory is full/);
    const write = tools.get('memory_write')!;
    expect(write.parameters.safeParse({ text: 't', tags: Array(11).fill('x') }).success).toBe(false);
    expect(write.parameters.safeParse({ text: 't', key: 'a\nb' }).success).toBe(false);
  });

  test('risk and idempotency: reads are low risk; a write is medium (it steers later conversations) and safe to retry', () => {
    expect(
      Object.fromEntries([...tools.values()].map((tool) => [tool.name, [tool.risk, tool.idempotent]])),
    ).toEqual({
      memory_write: ['medium', true],
      memory_search: ['low', true],
      memory_get: ['low', true],
    });
  });
});
