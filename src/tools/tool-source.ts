import type { RegisteredTool } from './tool';

/** What a source offers at the moment it is asked. */
export interface ToolDiscovery {
  /** The tools the source offers now. */
  tools: RegisteredTool[];
  /** Why some tools are missing (a server that would not start, a toolset that failed validation). */
  warnings: string[];
}

/**
 * Tools that live outside the worker (MCP servers, RAP toolsets), discovered at run time rather than
 * known when the worker starts. `discover` never throws: what fails is a warning and the other tools
 * stay usable. `close` releases connections and processes when the worker stops.
 */
export interface ToolSource {
  /** The source's name, for warnings and logs. */
  readonly name: string;
  /** The tools the source offers now, and warnings about those it could not offer; never rejects. */
  discover(): Promise<ToolDiscovery>;
  /** Releases the source's connections and processes. */
  close?(): Promise<void>;
}
