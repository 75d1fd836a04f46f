import type { ModelProvider } from '../shared/model-provider';
import type { ToolDescriptor } from '../shared/tool-descriptor';
import { describeTool } from './category-defaults';
import { parametersJsonSchema } from './json-schema';
import { toolParametersFor } from './provider-schema';
import type { RegisteredTool } from './tool';
import type { ToolSource } from './tool-source';

/** A function tool in the envelope OpenAI-compatible endpoints expect. */
export interface ModelToolSchema {
  /** Always `function`. */
  type: 'function';
  /** The tool as the model sees it. */
  function: {
    /** The tool's name. */
    name: string;
    /** What the tool does. */
    description: string;
    /** The arguments' JSON schema, cleaned for the provider. */
    parameters: Record<string, unknown>;
  };
}

interface Entry {
  tool: RegisteredTool;
  descriptor: ToolDescriptor;
  /** The parameters' JSON schema before any provider's cleaning: what arguments are normalised against. */
  parameters: Record<string, unknown>;
  /** Model-facing schemas, made once per provider. */
  schemas: Map<ModelProvider, ModelToolSchema>;
}

/** Which discovered tool names the worker lets through (its tool policy); all by default. */
export type ToolNameFilter = (names: string[]) => string[];

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const ENSURE_INTERVAL_MS = 10_000;

/**
 * The tools a worker can run, with their descriptors and model-facing schemas computed once: its
 * own tools, fixed when the worker starts, and those of external sources (MCP servers, RAP
 * toolsets), found again by `refresh`. A worker that restarts learns external tools anew on the
 * first call that names one (`ensure`).
 */
export class ToolRegistry {
  private readonly builtins = new Map<string, Entry>();
  private external = new Map<string, Entry>();
  private refreshing: Promise<string[]> | undefined;
  private lastEnsured = Number.NEGATIVE_INFINITY;

  /**
   * @param tools The worker's own tools; names must be unique and match `[a-zA-Z0-9_-]{1,64}` (throws otherwise).
   * @param sources Where external tools come from.
   * @param keepExternal Which discovered tool names to keep (the worker's tool policy); all by default.
   */
  constructor(
    tools: RegisteredTool[],
    /** Where external tools come from (MCP servers, RAP toolsets). */
    readonly sources: readonly ToolSource[] = [],
    private readonly keepExternal: ToolNameFilter = (names) => names,
  ) {
    for (const tool of tools) {
      if (!TOOL_NAME.test(tool.name)) throw new Error(`invalid tool name: ${JSON.stringify(tool.name)}`);
      if (this.builtins.has(tool.name)) throw new Error(`two tools are named ${tool.name}`);
      this.builtins.set(tool.name, entryOf(tool));
    }
  }

  /** The tool of that name, built-in or external as last discovered; undefined when there is none. */
  get(name: string): RegisteredTool | undefined {
    return this.entry(name)?.tool;
  }

  /** The names of every tool: built-in ones first, then external ones as last discovered. */
  names(): string[] {
    return [...this.builtins.keys(), ...this.external.keys()];
  }

  /** The same registry without the built-in tools not named, and external ones passing `keepExternal` (the worker's tool policy). */
  only(names: Iterable<string>, keepExternal: ToolNameFilter = this.keepExternal): ToolRegistry {
    const kept = new Set(names);
    return new ToolRegistry(
      [...this.builtins.values()].flatMap(({ tool }) => (kept.has(tool.name) ? [tool] : [])),
      this.sources,
      keepExternal,
    );
  }

  /** The descriptor (category, risk, approval, timeouts) of the tool of that name; undefined when there is none. */
  descriptor(name: string): ToolDescriptor | undefined {
    return this.entry(name)?.descriptor;
  }

  /** The descriptors of every tool, in the order of `names`. */
  descriptors(): ToolDescriptor[] {
    return [...this.builtins.values(), ...this.external.values()].map((entry) => entry.descriptor);
  }

  /** The tool's parameters as JSON schema, the same for every provider. */
  parameters(name: string): Record<string, unknown> | undefined {
    return this.entry(name)?.parameters;
  }

  /**
   * Schemas for the named tools as `provider` accepts them, sorted by name so the model sees a
   * stable list. Unknown names are skipped.
   */
  modelSchemas(names: string[], provider: ModelProvider = 'openai'): ModelToolSchema[] {
    return [...new Set(names)].sort().flatMap((name) => {
      const entry = this.entry(name);
      return entry ? [schemaFor(entry, provider)] : [];
    });
  }

  /**
   * Asks every source for its tools now and replaces the external ones; returns what went wrong.
   * A name taken by a built-in tool, or offered by two sources, exposes none of them. Calls made
   * while one is under way share it.
   */
  refresh(): Promise<string[]> {
    if (this.sources.length === 0) return Promise.resolve([]);
    this.refreshing ??= this.discover().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  /**
   * Refreshes when one of `names` is not known here (a worker that started after the conversation
   * did), at most once per `ENSURE_INTERVAL_MS`, so a tool that is gone for good costs no more.
   */
  async ensure(names: Iterable<string>): Promise<void> {
    if (this.sources.length === 0) return;
    for (const name of names) {
      if (this.entry(name)) continue;
      const now = Date.now();
      if (this.refreshing || now - this.lastEnsured >= ENSURE_INTERVAL_MS) {
        this.lastEnsured = now;
        await this.refresh();
      }
      return;
    }
  }

  /** Closes every source (connections, child processes); for the worker's shutdown. */
  async close(): Promise<void> {
    await Promise.allSettled(this.sources.map((source) => source.close?.()));
  }

  private entry(name: string): Entry | undefined {
    return this.builtins.get(name) ?? this.external.get(name);
  }

  private async discover(): Promise<string[]> {
    const discoveries = await Promise.all(
      this.sources.map(async (source) => {
        try {
          return { source, ...(await source.discover()) };
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          return { source, tools: [], warnings: [`tool source ${source.name} failed: ${message}`] };
        }
      }),
    );
    const warnings = discoveries.flatMap((discovery) => discovery.warnings);
    const offeredBy = new Map<string, string[]>();
    const candidates = new Map<string, RegisteredTool>();
    for (const { source, tools } of discoveries) {
      for (const tool of tools) {
        if (!TOOL_NAME.test(tool.name)) {
          warnings.push(
            `${source.name}: tool ${JSON.stringify(tool.name)} has an invalid name and is not offered`,
          );
          continue;
        }
        offeredBy.set(tool.name, [...(offeredBy.get(tool.name) ?? []), source.name]);
        candidates.set(tool.name, tool);
      }
    }
    const usable: string[] = [];
    for (const [name, sources] of offeredBy) {
      if (this.builtins.has(name)) {
        warnings.push(
          `${sources.join(', ')}: tool ${name} has the name of a built-in tool and is not offered`,
        );
      } else if (sources.length > 1) {
        warnings.push(`tool ${name} is offered by ${sources.join(' and ')}, so by neither`);
      } else {
        usable.push(name);
      }
    }
    const kept = new Set(this.keepExternal(usable));
    const previous = this.external;
    this.external = new Map(
      usable
        .filter((name) => kept.has(name))
        .map((name) => {
          const tool = candidates.get(name)!;
          const known = previous.get(name);
          return [name, known?.tool === tool ? known : entryOf(tool)];
        }),
    );
    return warnings;
  }
}

function entryOf(tool: RegisteredTool): Entry {
  return {
    tool,
    descriptor: describeTool(tool),
    parameters: tool.inputJsonSchema ?? parametersJsonSchema(tool.parameters),
    schemas: new Map(),
  };
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
