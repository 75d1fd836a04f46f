import { conversationToolPolicySteps } from '../../src/workflows/conversation-tool-policy';
import { CATALOG_TOOL_NAMES, TOOL_GROUPS, TOOL_PROFILES, TOOL_SECTIONS } from '../../src/shared/tool-catalog';
import {
  type ToolPolicyStep,
  applyToolPolicyPipeline,
  normalizeToolName,
} from '../../src/shared/tool-policy';

/** What a worker of this project has: the catalog's file, runtime and web tools plus an embedder's own. */
const WORKER = [
  'read',
  'write',
  'edit',
  'list_directory',
  'grep',
  'glob',
  'exec',
  'web_fetch',
  'echo',
  'Deploy',
];

const keep = (steps: ToolPolicyStep[], tools = WORKER) => applyToolPolicyPipeline(tools, steps).tools;
const warn = (steps: ToolPolicyStep[], tools = WORKER) => applyToolPolicyPipeline(tools, steps).warnings;

describe('catalog', () => {
  test('sections name every tool once', () => {
    const all = TOOL_SECTIONS.flatMap((section) => section.tools);
    expect(new Set(all).size).toBe(all.length);
    expect(CATALOG_TOOL_NAMES.size).toBe(all.length);
  });

  test.each([
    ['group:fs', ['read', 'write', 'edit', 'apply_patch', 'list_directory', 'grep', 'glob']],
    ['group:runtime', ['exec', 'process']],
    ['group:web', ['web_search', 'web_fetch']],
    ['group:memory', ['memory_search', 'memory_get', 'memory_write']],
    [
      'group:sessions',
      ['sessions_list', 'sessions_history', 'sessions_send', 'sessions_spawn', 'subagents', 'session_status'],
    ],
    ['group:messaging', ['message']],
    ['group:media', ['image', 'tts']],
  ])('%s', (group, tools) => {
    expect(TOOL_GROUPS[group]).toEqual(tools);
  });

  test('group:openclaw is the whole catalog', () => {
    expect(new Set(TOOL_GROUPS['group:openclaw'])).toEqual(CATALOG_TOOL_NAMES);
  });

  test('every profile entry is a catalog tool or group; full restricts nothing', () => {
    for (const entries of Object.values(TOOL_PROFILES)) {
      for (const entry of entries ?? []) {
        expect(CATALOG_TOOL_NAMES.has(entry) || entry in TOOL_GROUPS).toBe(true);
      }
    }
    expect(TOOL_PROFILES.full).toBeUndefined();
  });
});

describe('applyToolPolicyPipeline: filtering', () => {
  const worker = [
    'read',
    'write',
    'exec',
    'process',
    'memory_get',
    'memory_search',
    'github__issues',
    'echo',
  ];
  test.each<[string, ToolPolicyStep[], string[]]>([
    ['no steps: everything', [], worker],
    ['a step without lists: everything', [{ label: 's' }], worker],
    ['allow names', [{ label: 's', allow: ['read', 'echo'] }], ['read', 'echo']],
    ['an empty allow list allows nothing', [{ label: 's', allow: [] }], []],
    ['deny names', [{ label: 's', deny: ['exec'] }], worker.filter((name) => name !== 'exec')],
    ['groups expand', [{ label: 's', allow: ['group:runtime'] }], ['exec', 'process']],
    [
      'patterns',
      [{ label: 's', allow: ['memory_*', 'github__*'] }],
      ['memory_get', 'memory_search', 'github__issues'],
    ],
    ['* allows everything', [{ label: 's', allow: ['*'] }], worker],
    ['deny wins within a step', [{ label: 's', allow: ['group:runtime'], deny: ['exec'] }], ['process']],
    ['deny * leaves nothing', [{ label: 's', deny: ['*'] }], []],
    [
      'a later allow cannot add back what an earlier step removed',
      [
        { label: 'a', allow: ['read'] },
        { label: 'b', allow: ['read', 'write'] },
      ],
      ['read'],
    ],
    [
      'a deny in any step wins over an allow in a later one',
      [
        { label: 'a', deny: ['exec'] },
        { label: 'b', allow: ['exec', 'read'] },
      ],
      ['read'],
    ],
    [
      'a deny in a later step removes what an earlier one allowed',
      [
        { label: 'a', allow: ['group:runtime', 'read'] },
        { label: 'b', deny: ['group:runtime'] },
      ],
      ['read'],
    ],
    [
      'case and spaces do not matter',
      [{ label: 's', allow: [' READ ', 'Group:Runtime'] }],
      ['read', 'exec', 'process'],
    ],
    ['bash means exec', [{ label: 's', allow: ['bash'] }], ['exec']],
    ['alsoAllow extends an allow', [{ label: 's', allow: ['read'], alsoAllow: ['echo'] }], ['read', 'echo']],
    ['alsoAllow without allow restricts nothing', [{ label: 's', alsoAllow: ['echo'] }], worker],
    ['a typo fails closed', [{ label: 's', allow: ['raed'] }], []],
  ])('%s', (_name, steps, expected) => {
    expect(keep(steps, worker)).toEqual(expected);
  });

  test('tool names keep their spelling and order; matching ignores case', () => {
    expect(keep([{ label: 's', allow: ['deploy', 'echo', 'read'] }])).toEqual(['read', 'echo', 'Deploy']);
  });
});

describe('applyToolPolicyPipeline: warnings', () => {
  test.each<[string, ToolPolicyStep[], string[]]>([
    ['nothing to say', [{ label: 'c', allow: ['read', 'group:fs', 'e*'], deny: ['exec'] }], []],
    [
      'an unknown tool in allow',
      [{ label: 'c', allow: ['raed'] }],
      ['tool policy (c): unknown tool "raed" in allow'],
    ],
    [
      'an unknown tool in deny',
      [{ label: 'c', deny: ['exce'] }],
      ['tool policy (c): unknown tool "exce" in deny'],
    ],
    [
      'an unknown group',
      [{ label: 'c', allow: ['group:filesystem'] }],
      ['tool policy (c): unknown group "group:filesystem" in allow'],
    ],
    [
      'a pattern matching nothing',
      [{ label: 'c', deny: ['mcp__*'] }],
      ['tool policy (c): "mcp__*" in deny matches no tool'],
    ],
    [
      'a catalog tool this worker lacks, allowed',
      [{ label: 'c', allow: ['read', 'web_search'] }],
      ['tool policy (c): "web_search" in allow is not available on this worker'],
    ],
    [
      'a catalog tool this worker lacks, denied: harmless',
      [{ label: 'c', deny: ['web_search', 'group:ui'] }],
      [],
    ],
    [
      'a group none of whose tools this worker has',
      [{ label: 'c', allow: ['read', 'group:ui'] }],
      ['tool policy (c): "group:ui" in allow is not available on this worker'],
    ],
    [
      'an allow entry an earlier step already removed',
      [
        { label: 'profile coding', allow: TOOL_PROFILES.coding, catalogAllow: true },
        { label: 'conversation', allow: ['read', 'web_fetch'] },
      ],
      ['tool policy (conversation): "web_fetch" in allow has no effect: already removed by profile coding'],
    ],
    [
      'an unknown alsoAllow entry',
      [{ label: 'profile minimal', allow: TOOL_PROFILES.minimal, alsoAllow: ['ecoh'], catalogAllow: true }],
      ['tool policy (profile minimal): unknown tool "ecoh" in alsoAllow'],
    ],
  ])('%s', (_name, steps, expected) => {
    expect(warn(steps)).toEqual(expected);
  });

  test("a profile's own entries are never reported, though this worker lacks most of them", () => {
    for (const entries of Object.values(TOOL_PROFILES)) {
      expect(warn([{ label: 'profile', allow: entries, catalogAllow: true }])).toEqual([]);
    }
  });

  test('the same warning is given once', () => {
    expect(warn([{ label: 'c', allow: ['raed', 'RAED', 'raed '] }])).toHaveLength(1);
  });
});

describe('conversation steps', () => {
  const offered = (options: Parameters<typeof conversationToolPolicySteps>[0]) =>
    applyToolPolicyPipeline(WORKER, conversationToolPolicySteps(options));

  test('without options every tool is offered (profile full)', () => {
    expect(offered({})).toEqual({ tools: WORKER, warnings: [] });
  });

  test.each<[string, Parameters<typeof conversationToolPolicySteps>[0], string[]]>([
    ['minimal: nothing here (session_status is not on this worker)', { profile: 'minimal' }, []],
    [
      'coding: the catalog coding tools only',
      { profile: 'coding' },
      ['read', 'write', 'edit', 'list_directory', 'grep', 'glob', 'exec'],
    ],
    ['messaging: none of these', { profile: 'messaging' }, []],
    [
      'coding plus an own tool',
      { profile: 'coding', alsoAllow: ['echo'] },
      ['read', 'write', 'edit', 'list_directory', 'grep', 'glob', 'exec', 'echo'],
    ],
    [
      'coding without commands',
      { profile: 'coding', deny: ['group:runtime'] },
      ['read', 'write', 'edit', 'list_directory', 'grep', 'glob'],
    ],
    [
      'full narrowed by allow',
      { allow: ['group:fs'], deny: ['write', 'edit'] },
      ['read', 'list_directory', 'grep', 'glob'],
    ],
    ['the older tools option still narrows', { tools: ['read', 'echo'] }, ['read', 'echo']],
    ['tools and allow both apply', { tools: ['read', 'echo'], allow: ['read', 'exec'] }, ['read']],
  ])('%s', (_name, options, expected) => {
    expect(offered(options).tools).toEqual(expected);
  });

  test('warnings name the step', () => {
    expect(offered({ profile: 'coding', allow: ['web_fetch', 'nope'] }).warnings).toEqual([
      'tool policy (conversation): "web_fetch" in allow has no effect: already removed by profile coding',
      'tool policy (conversation): unknown tool "nope" in allow',
    ]);
  });
});

test.each([
  ['read', 'read'],
  ['  Exec ', 'exec'],
  ['bash', 'exec'],
  ['apply-patch', 'apply_patch'],
  ['GROUP:FS', 'group:fs'],
])('normalizeToolName(%j) is %j', (name, expected) => {
  expect(normalizeToolName(name)).toBe(expected);
});
