import { z } from 'zod';
import { builtinTools } from '../../src/tools/builtin/builtin-tools';
import { describeTool } from '../../src/tools/category-defaults';
import { parametersJsonSchema } from '../../src/tools/json-schema';
import { ToolRegistry } from '../../src/tools/registry';
import { type AgentTool, defineTool, textResult } from '../../src/tools/tool';
import type { ToolCategory } from '../../src/shared/tool-descriptor';

function fakeTool(name: string, overrides: Partial<AgentTool> = {}): AgentTool {
  return defineTool({
    name,
    label: `Label ${name}`,
    description: `Does ${name}`,
    parameters: z.object({ value: z.string() }),
    category: 'other',
    idempotent: true,
    risk: 'low',
    async execute() {
      return textResult(name);
    },
    ...overrides,
  }) as AgentTool;
}

describe('ToolRegistry.modelSchemas', () => {
  const registry = new ToolRegistry([fakeTool('zeta'), fakeTool('alpha'), fakeTool('mid')]);

  test('returns schemas sorted by name in the OpenAI function envelope', () => {
    const schemas = registry.modelSchemas(['zeta', 'alpha', 'mid']);
    expect(schemas.map((schema) => schema.function.name)).toEqual(['alpha', 'mid', 'zeta']);
    expect(schemas[0]).toEqual({
      type: 'function',
      function: {
        name: 'alpha',
        description: 'Does alpha',
        parameters: {
          type: 'object',
          properties: { value: { type: 'string' } },
          required: ['value'],
        },
      },
    });
  });

  test('parameters are the cleaned JSON schema of the tool', () => {
    const tool = fakeTool('counted', { parameters: z.object({ n: z.number().int() }) });
    const [schema] = new ToolRegistry([tool]).modelSchemas(['counted']);
    expect(schema!.function.parameters).toEqual(parametersJsonSchema(tool.parameters));
    expect(JSON.stringify(schema)).not.toContain('$schema');
  });

  test('unknown names are skipped and duplicates listed once', () => {
    const schemas = registry.modelSchemas(['nope', 'zeta', 'alpha', 'zeta', 'missing']);
    expect(schemas.map((schema) => schema.function.name)).toEqual(['alpha', 'zeta']);
  });

  test('only the requested tools are returned', () => {
    expect(registry.modelSchemas(['mid']).map((schema) => schema.function.name)).toEqual(['mid']);
    expect(registry.modelSchemas([])).toEqual([]);
  });

  test('the builtin tools all register', () => {
    const builtin = new ToolRegistry(builtinTools());
    const names = builtin.modelSchemas(builtinTools().map((tool) => tool.name)).map((s) => s.function.name);
    expect(names).toEqual([
      'apply_patch',
      'edit',
      'exec',
      'glob',
      'grep',
      'list_directory',
      'memory_get',
      'memory_search',
      'memory_write',
      'process',
      'read',
      'session_status',
      'sessions_history',
      'sessions_list',
      'sessions_send',
      'sessions_spawn',
      'web_fetch',
      'write',
    ]);
  });
});

describe('ToolRegistry construction', () => {
  test('duplicate tool names throw', () => {
    expect(() => new ToolRegistry([fakeTool('same'), fakeTool('other'), fakeTool('same')])).toThrow(
      /two tools are named same/,
    );
  });

  test.each(['', 'has space', 'dot.name', 'slash/name', 'ünïcode', 'a'.repeat(65)])(
    'invalid name %j throws',
    (name) => {
      expect(() => new ToolRegistry([fakeTool(name)])).toThrow(/invalid tool name/);
    },
  );

  test.each(['a', 'snake_case', 'kebab-case', 'Mixed123', 'a'.repeat(64)])(
    'valid name %j is accepted',
    (name) => {
      expect(new ToolRegistry([fakeTool(name)]).get(name)?.name).toBe(name);
    },
  );

  test('get, descriptor and descriptors', () => {
    const one = fakeTool('one');
    const registry = new ToolRegistry([one, fakeTool('two')]);
    expect(registry.get('one')).toBe(one);
    expect(registry.get('three')).toBeUndefined();
    expect(registry.descriptor('three')).toBeUndefined();
    expect(registry.descriptor('two')).toMatchObject({ name: 'two', label: 'Label two', category: 'other' });
    expect(registry.descriptors().map((descriptor) => descriptor.name)).toEqual(['one', 'two']);
  });
});

describe('descriptors carry category defaults', () => {
  // Heartbeats only prove the worker alive, so every category has the same timeout for them.
  test.each<[ToolCategory, number, number]>([
    ['files', 30_000, 3_000],
    ['search', 60_000, 3_000],
    ['commands', 300_000, 3_000],
    ['mcp', 120_000, 3_000],
    ['other', 60_000, 3_000],
  ])('%s: start-to-close %i ms, heartbeat %i ms', (category, startToClose, heartbeat) => {
    const descriptor = describeTool(fakeTool('t', { category }));
    expect(descriptor.startToCloseTimeoutMs).toBe(startToClose);
    expect(descriptor.heartbeatTimeoutMs).toBe(heartbeat);
  });

  test('idempotent tools retry 3 times, others run once', () => {
    expect(describeTool(fakeTool('r', { idempotent: true })).retry).toEqual({
      maximumAttempts: 3,
      initialIntervalMs: 500,
      backoffCoefficient: 2,
      maximumIntervalMs: 10_000,
    });
    expect(describeTool(fakeTool('w', { idempotent: false })).retry).toEqual({
      maximumAttempts: 1,
      initialIntervalMs: 500,
      backoffCoefficient: 2,
      maximumIntervalMs: 10_000,
    });
  });

  test('builtin tools get their category defaults and retry policy', () => {
    const registry = new ToolRegistry(builtinTools());
    const expected: Record<string, [number, number]> = {
      read: [30_000, 3],
      write: [30_000, 1],
      edit: [30_000, 1],
      list_directory: [30_000, 3],
      grep: [60_000, 3],
      glob: [60_000, 3],
      exec: [300_000, 1],
      apply_patch: [30_000, 1],
      process: [300_000, 1],
      web_fetch: [60_000, 3],
      memory_write: [30_000, 3],
      memory_search: [60_000, 3],
      memory_get: [30_000, 3],
      sessions_list: [60_000, 3],
      session_status: [60_000, 3],
      sessions_history: [60_000, 3],
      sessions_send: [270_000, 1],
      sessions_spawn: [60_000, 1],
    };
    for (const [name, [timeout, attempts]] of Object.entries(expected)) {
      const descriptor = registry.descriptor(name);
      expect({
        name,
        timeout: descriptor?.startToCloseTimeoutMs,
        attempts: descriptor?.retry.maximumAttempts,
      }).toEqual({ name, timeout, attempts });
    }
  });

  test('per-tool overrides win over category defaults', () => {
    const descriptor = describeTool(
      fakeTool('custom', {
        category: 'commands',
        idempotent: false,
        startToCloseTimeoutMs: 5_000,
        heartbeatTimeoutMs: 1_000,
        retry: { maximumAttempts: 4, maximumIntervalMs: 500 },
      }),
    );
    expect(descriptor).toEqual({
      name: 'custom',
      label: 'Label custom',
      category: 'commands',
      idempotent: false,
      startToCloseTimeoutMs: 5_000,
      heartbeatTimeoutMs: 1_000,
      retry: { maximumAttempts: 4, initialIntervalMs: 500, backoffCoefficient: 2, maximumIntervalMs: 500 },
      risk: 'low',
      approval: 'auto',
    });
  });

  test('the approval mode follows the risk level unless the tool names its own', () => {
    expect(describeTool(fakeTool('r', { risk: 'low' })).approval).toBe('auto');
    expect(describeTool(fakeTool('w', { risk: 'medium' })).approval).toBe('ask');
    expect(describeTool(fakeTool('x', { risk: 'high' })).approval).toBe('ask');
    expect(describeTool(fakeTool('d', { risk: 'critical' })).approval).toBe('always');
    expect(describeTool(fakeTool('o', { risk: 'high', approval: 'auto' })).approval).toBe('auto');
  });

  test('built-in tools: read-only ones run on their own, writes and commands ask', () => {
    const registry = new ToolRegistry(builtinTools());
    const modes = Object.fromEntries(registry.descriptors().map((d) => [d.name, d.approval]));
    expect(modes).toEqual({
      read: 'auto',
      list_directory: 'auto',
      grep: 'auto',
      glob: 'auto',
      write: 'ask',
      edit: 'ask',
      exec: 'ask',
      apply_patch: 'ask',
      process: 'auto',
      web_fetch: 'auto',
      memory_search: 'auto',
      memory_get: 'auto',
      memory_write: 'ask',
      sessions_list: 'auto',
      session_status: 'auto',
      sessions_history: 'ask',
      sessions_send: 'ask',
      sessions_spawn: 'auto',
    });
  });

  test('overriding one timeout keeps the other default', () => {
    const descriptor = describeTool(fakeTool('half', { category: 'files', heartbeatTimeoutMs: 2_000 }));
    expect(descriptor.startToCloseTimeoutMs).toBe(30_000);
    expect(descriptor.heartbeatTimeoutMs).toBe(2_000);
  });

  test('describing a tool does not change the shared defaults', () => {
    describeTool(fakeTool('mutating', { retry: { maximumAttempts: 9 } }));
    expect(describeTool(fakeTool('plain')).retry.maximumAttempts).toBe(3);
  });
});
