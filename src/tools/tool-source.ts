import type { RegisteredTool } from './tool';

/** What a source offers at the moment it is asked. */
export interface ToolDiscovery {
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
  readonly name: string;
  discover(): Promise<ToolDiscovery>;
  close?(): Promise<void>;
}
