import type { ModelProvider } from '../shared/model-provider';
import type { ToolDescriptor } from '../shared/tool-descriptor';
import { describeTool } from './category-defaults';
import { parametersJsonSchema } from './json-schema';
import { toolParametersFor } from './provider-schema';
import type { AgentTool } from './tool';

/** A function tool in the envelope OpenAI-compatible endpoints expect. */
export interface ModelToolSchema {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

interface Entry {
  tool: AgentTool;
  descriptor: ToolDescriptor;
  /** The parameters' JSON schema before any provider's cleaning: what arguments are normalised against. */
  parameters: Record<string, unknown>;
  /** Model-facing schemas, made once per provider. */
  schemas: Map<ModelProvider, ModelToolSchema>;
}

/** The tools a worker can run, with their descriptors and model-facing schemas computed once. */
export class ToolRegistry {
  private readonly tools = new Map<string, Entry>();

  constructor(tools: AgentTool[]) {
    for (const tool of tools) {
      if (!/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name))
        throw new Error(`invalid tool name: ${JSON.stringify(tool.name)}`);
      if (this.tools.has(tool.name)) throw new Error(`two tools are named ${tool.name}`);
      this.tools.set(tool.name, {
        tool,
        descriptor: describeTool(tool),
        parameters: parametersJsonSchema(tool.parameters),
        schemas: new Map(),
      });
    }
  }

  get(name: string): AgentTool | undefined {
    return this.tools.get(name)?.tool;
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  /** The same registry without the tools not named (the worker's tool policy). */
  only(names: Iterable<string>): ToolRegistry {
    const kept = new Set(names);
    return new ToolRegistry(
      [...this.tools.values()].flatMap(({ tool }) => (kept.has(tool.name) ? [tool] : [])),
    );
  }

  descriptor(name: string): ToolDescriptor | undefined {
    return this.tools.get(name)?.descriptor;
  }

  descriptors(): ToolDescriptor[] {
    return [...this.tools.values()].map((entry) => entry.descriptor);
  }

  /** The tool's parameters as JSON schema, the same for every provider. */
  parameters(name: string): Record<string, unknown> | undefined {
    return this.tools.get(name)?.parameters;
  }

  /**
   * Schemas for the named tools as `provider` accepts them, sorted by name so the model sees a
   * stable list. Unknown names are skipped.
   */
  modelSchemas(names: string[], provider: ModelProvider = 'openai'): ModelToolSchema[] {
    return [...new Set(names)].sort().flatMap((name) => {
      const entry = this.tools.get(name);
      return entry ? [schemaFor(entry, provider)] : [];
    });
  }
}

function schemaFor(entry: Entry, provider: ModelProvider): ModelToolSchema {
  let schema = entry.schemas.get(provider);
  if (!schema) {
    schema = {
      type: 'function',
      function: {
        name: entry.tool.name,
        description: entry.tool.description,
        parameters: toolParametersFor(provider, entry.parameters),
      },
    };
    entry.schemas.set(provider, schema);
  }
  return schema;
}
