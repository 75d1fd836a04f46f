import { z } from 'zod';
import type { AgentTool } from '../../src/tools/tool';
import { textResult } from '../../src/tools/tool';
import { ToolRegistry } from '../../src/tools/registry';
import type { ToolDiscovery, ToolSource } from '../../src/tools/tool-source';
import { applyWorkerToolPolicy } from '../../src/worker/worker-tool-policy';

function externalTool(name: string, inputJsonSchema?: Record<string, unknown>): AgentTool {
  return {
    name,
    label: name,
    description: `external ${name}`,
    parameters: z.record(z.string(), z.unknown()),
    ...(inputJsonSchema ? { inputJsonSchema } : {}),
    category: 'mcp',
    idempotent: false,
    risk: 'medium',
    execute: async () => textResult(name),
  };
}

class ScriptedSource implements ToolSource {
  calls = 0;
  constructor(
    readonly name: string,
    public next: () => ToolDiscovery | Promise<ToolDiscovery>,
  ) {}
  async discover(): Promise<ToolDiscovery> {
    this.calls++;
    return this.next();
  }
}

const builtin = externalTool('read');

describe('ToolRegistry with external sources', () => {
  it('offers discovered tools with the JSON schema their server gave, beside the built-ins', async () => {
    const schema = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };
    const source = new ScriptedSource('mcp', () => ({
      tools: [externalTool('srv__search', schema)],
      warnings: [],
    }));
    const registry = new ToolRegistry([builtin], [source]);
    expect(registry.get('srv__search')).toBeUndefined();

    expect(await registry.refresh()).toEqual([]);

    expect(registry.names()).toEqual(['read', 'srv__search']);
    expect(registry.parameters('srv__search')).toBe(schema);
    expect(registry.descriptor('srv__search')).toMatchObject({
      category: 'mcp',
      startToCloseTimeoutMs: 120_000,
    });
    expect(registry.modelSchemas(['srv__search'])[0]!.function.parameters).toMatchObject({
      properties: { q: { type: 'string' } },
    });
  });

  it('passes on the warnings of a failing source and keeps the tools of the others', async () => {
    const broken = new ScriptedSource('broken', () => Promise.reject(new Error('spawn ENOENT')));
    const good = new ScriptedSource('good', () => ({
      tools: [externalTool('good__a')],
      warnings: ['one skipped'],
    }));
    const registry = new ToolRegistry([builtin], [broken, good]);

    const warnings = await registry.refresh();

    expect(warnings).toEqual(['tool source broken failed: spawn ENOENT', 'one skipped']);
    expect(registry.get('good__a')).toBeDefined();
  });

  it('exposes neither tool when two sources offer the same name, nor one named like a built-in', async () => {
    const a = new ScriptedSource('a', () => ({
      tools: [externalTool('same'), externalTool('read')],
      warnings: [],
    }));
    const b = new ScriptedSource('b', () => ({
      tools: [externalTool('same'), externalTool('b_only')],
      warnings: [],
    }));
    const registry = new ToolRegistry([builtin], [a, b]);

    const warnings = await registry.refresh();

    expect(registry.names().sort()).toEqual(['b_only', 'read']);
    expect(registry.get('read')).toBe(builtin);
    expect(warnings.join('\n')).toMatch(/same is offered by a and b, so by neither/);
    expect(warnings.join('\n')).toMatch(/read has the name of a built-in tool/);
  });

  it('drops tools a source no longer offers and learns new ones on refresh', async () => {
    let offered = ['x__one'];
    const source = new ScriptedSource('x', () => ({
      tools: offered.map((name) => externalTool(name)),
      warnings: [],
    }));
    const registry = new ToolRegistry([], [source]);
    await registry.refresh();
    offered = ['x__two'];

    await registry.refresh();

    expect(registry.names()).toEqual(['x__two']);
  });

  it('refreshes when asked to ensure an unknown name, and shares a refresh already under way', async () => {
    const source = new ScriptedSource('x', () => ({ tools: [externalTool('x__one')], warnings: [] }));
    const registry = new ToolRegistry([], [source]);

    await Promise.all([registry.ensure(['x__one']), registry.refresh(), registry.refresh()]);
    expect(source.calls).toBe(1);
    expect(registry.get('x__one')).toBeDefined();

    await registry.ensure(['x__one']);
    expect(source.calls).toBe(1);
  });

  it("applies the worker's tool policy to discovered tools", async () => {
    const source = new ScriptedSource('x', () => ({
      tools: [externalTool('x__keep'), externalTool('x__drop')],
      warnings: [],
    }));
    const registry = applyWorkerToolPolicy(
      new ToolRegistry([builtin], [source]),
      { deny: ['x__drop'] },
      () => {},
    );

    await registry.refresh();

    expect(registry.names().sort()).toEqual(['read', 'x__keep']);
  });
});
