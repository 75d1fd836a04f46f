import path from 'node:path';
import { dataDir } from '../../platform/paths';
import { applyPatchTool } from './apply-patch';
import { editTool } from './edit';
import { globTool } from './glob';
import { grepTool } from './grep';
import { listDirectoryTool } from './list-directory';
import { MemoryStore } from './memory-store';
import { createMemoryTools } from './memory-tools';
import { readTool } from './read';
import { type RuntimeToolOptions, createRuntimeTools } from '../exec/runtime-tools';
import { type SessionDirectory, TemporalSessionDirectory } from './session-directory';
import { createSessionTools } from './session-tools';
import { spawnTool } from './spawn-tool';
import type { AgentTool, RegisteredTool } from '../tool';
import { type WebFetchOptions, createWebFetchTool, webFetchTool } from './web-fetch';
import { writeTool } from './write';

/** What the built-in tools need; each part has a default when absent. */
export interface BuiltinToolDeps {
  /** Where memory tools keep each agent's notes; `<data dir>/memory` (DURABLE_AGENT_DATA_DIR) when absent. */
  memory?: MemoryStore;
  /** How session tools reach other conversations; Temporal, through the running activity's client, when absent. */
  sessions?: SessionDirectory;
  /** Limits of `web_fetch`; by default it reaches public addresses only. */
  webFetch?: WebFetchOptions;
  /** `exec` security (the worker's mode and safe bins) and background process limits; `full` mode by default. */
  runtime?: RuntimeToolOptions;
}

/** The built-in tools (files, search, exec, web, memory, sessions, …), made with `deps`. */
export function builtinTools(deps: BuiltinToolDeps = {}): RegisteredTool[] {
  return [
    ...([
      readTool,
      writeTool,
      editTool,
      applyPatchTool,
      listDirectoryTool,
      grepTool,
      globTool,
    ] as AgentTool[]),
    ...createRuntimeTools(deps.runtime),
    deps.webFetch ? createWebFetchTool(deps.webFetch) : webFetchTool,
    ...createMemoryTools(deps.memory ?? new MemoryStore(path.join(dataDir(), 'memory'))),
    ...createSessionTools(deps.sessions ?? new TemporalSessionDirectory()),
    spawnTool as RegisteredTool,
  ];
}
