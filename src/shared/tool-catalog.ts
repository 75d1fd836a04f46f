import { z } from 'zod';

/**
 * The tool catalog: every tool this runtime knows by name, in sections, with
 * the groups and profiles that policies refer to. A worker may lack some of them (they are written
 * separately, or not at all here: `browser`, `cron`, …); a name in the catalog is still a known name,
 * so a policy that mentions it is not a typo. Plain data: the workflow uses it.
 *
 * `list_directory`, `grep` and `glob` join the spec's file tools, and `memory_write` its memory
 * tools, so `group:fs` and `group:memory` (and the `coding` profile) include them.
 */
export const TOOL_SECTIONS = [
  {
    id: 'fs',
    label: 'Files',
    tools: ['read', 'write', 'edit', 'apply_patch', 'list_directory', 'grep', 'glob'],
  },
  { id: 'runtime', label: 'Runtime', tools: ['exec', 'process'] },
  { id: 'web', label: 'Web', tools: ['web_search', 'web_fetch'] },
  { id: 'memory', label: 'Memory', tools: ['memory_search', 'memory_get', 'memory_write'] },
  {
    id: 'sessions',
    label: 'Sessions',
    tools: [
      'sessions_list',
      'sessions_history',
      'sessions_send',
      'sessions_spawn',
      'subagents',
      'session_status',
    ],
  },
  { id: 'ui', label: 'UI', tools: ['browser', 'canvas'] },
  { id: 'messaging', label: 'Messaging', tools: ['message'] },
  { id: 'automation', label: 'Automation', tools: ['cron', 'gateway'] },
  { id: 'nodes', label: 'Nodes', tools: ['nodes'] },
  { id: 'agents', label: 'Agents', tools: ['agents_list'] },
  { id: 'media', label: 'Media', tools: ['image', 'tts'] },
] as const satisfies readonly { id: string; label: string; tools: readonly string[] }[];

export const CATALOG_TOOL_NAMES: ReadonlySet<string> = new Set(
  TOOL_SECTIONS.flatMap((section) => section.tools),
);

/** `group:<section>` for every section, and `group:openclaw` (the spec's name) for the whole catalog. */
export const TOOL_GROUPS: Readonly<Record<string, readonly string[]>> = {
  ...Object.fromEntries(TOOL_SECTIONS.map((section) => [`group:${section.id}`, section.tools])),
  'group:openclaw': [...CATALOG_TOOL_NAMES],
};

export const ToolProfileSchema = z.enum(['minimal', 'coding', 'messaging', 'full']);
export type ToolProfile = z.infer<typeof ToolProfileSchema>;

/**
 * What each profile allows, as policy entries. `full` restricts nothing, so
 * it also offers tools outside the catalog (an embedder's own, MCP tools); the others offer only
 * catalog tools unless a conversation's `alsoAllow` adds more.
 */
export const TOOL_PROFILES: Readonly<Record<ToolProfile, readonly string[] | undefined>> = {
  minimal: ['session_status'],
  coding: ['group:fs', 'group:runtime', 'group:sessions', 'group:memory', 'image'],
  messaging: ['group:messaging', 'sessions_list', 'sessions_history', 'sessions_send', 'session_status'],
  full: undefined,
};
