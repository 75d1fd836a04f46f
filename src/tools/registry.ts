import type { ToolDescriptor } from '../shared/tool-descriptor';
import { describeTool } from './category-defaults';
import { parametersJsonSchema } from './json-schema';
import type { AgentTool } from './tool';

/** A function tool in the envelope OpenAI-compatible endpoints expect. */
export interface ModelToolSchema {
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}

/** The tools a worker can run, with their descriptors and model-facing schemas computed once. */
export class ToolRegistry {
  private readonly tools = new Map<
    string,
    { tool: AgentTool; descriptor: ToolDescriptor; schema: ModelToolSchema }
  >();

  constructor(tools: AgentTool[]) {
    for (const tool of tools) {
      if (!/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name))
        throw new Error(`invalid tool name: ${JSON.stringify(tool.name)}`);
      if (this.tools.has(tool.name)) throw new Error(`two tools are named ${tool.name}`);
      this.tools.set(tool.name, {
        tool,
        descriptor: describeTool(tool),
        schema: {
          type: 'function',
          function: {
            name: tool.name,
            description: tool.description,
            parameters: parametersJsonSchema(tool.parameters),
          },
        },
      });
    }
  }

  get(name: string): AgentTool | undefined {
    return this.tools.get(name)?.tool;
  }

  descriptor(name: string): ToolDescriptor | undefined {
    return this.tools.get(name)?.descriptor;
  }

  descriptors(): ToolDescriptor[] {
    return [...this.tools.values()].map((entry) => entry.descriptor);
  }

  /** Schemas for the named tools, sorted by name so the model sees a stable list. Unknown names are skipped. */
  modelSchemas(names: string[]): ModelToolSchema[] {
    return [...new Set(names)].sort().flatMap((name) => {
      const entry = this.tools.get(name);
      return entry ? [entry.schema] : [];
    });
  }
}
