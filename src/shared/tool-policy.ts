import { z } from 'zod';
import { CATALOG_TOOL_NAMES, TOOL_GROUPS } from './tool-catalog';

/**
 * Entries are tool names, `group:` names (tool-catalog.ts) or patterns with `*` (`memory_*`,
 * `github__*`, `*` alone for everything). Case and surrounding spaces do not matter; `bash` means
 * `exec` and `apply-patch` means `apply_patch`.
 */
const PolicyEntriesSchema = z.array(z.string());

/** An allow/deny pair, as a worker's configuration or a conversation's options give it. */
export const ToolPolicySchema = z.object({
  /** Only these tools; every tool when absent. An empty list allows nothing. */
  allow: PolicyEntriesSchema.optional(),
  /** Never these tools, whatever any allow says. */
  deny: PolicyEntriesSchema.optional(),
});
/**
 * Which tools may be used: `allow` and `deny` lists of tool names, `group:` names or `*` patterns;
 * a deny wins over any allow.
 *
 * @useDeclaredType
 */
export type ToolPolicy = z.infer<typeof ToolPolicySchema>;

/** One step of the tool policy pipeline (profile, global, agent, group, sandbox, sub-agent): each can only narrow what the one before kept. */
export interface ToolPolicyStep {
  /** Names the step in warnings, e.g. `profile coding` or `conversation`. */
  label: string;
  /** Only tools these entries match pass; all pass when absent; none when empty. */
  allow?: readonly string[];
  /** Pass too, when there is an `allow` (a profile plus a person's own tools). */
  alsoAllow?: readonly string[];
  /** Tools these entries match are removed, whatever `allow` says. */
  deny?: readonly string[];
  /** `allow` is the catalog's own list (a profile), not a person's: its entries are not checked. */
  catalogAllow?: boolean;
}

export interface ToolPolicyResult {
  /** The tools every step let through, in the order given. */
  tools: string[];
  /** Entries that match nothing or change nothing, one sentence each, for the user to see. */
  warnings: string[];
}

const NAME_ALIASES: Readonly<Record<string, string>> = { bash: 'exec', 'apply-patch': 'apply_patch' };

export function normalizeToolName(name: string): string {
  const normalized = name.trim().toLowerCase();
  return NAME_ALIASES[normalized] ?? normalized;
}

type EntryList = 'allow' | 'alsoAllow' | 'deny';

/**
 * Applies the steps in order, each to what the previous ones kept, so an allow can only narrow and a
 * deny anywhere wins. A typo fails closed: an allow entry that matches nothing lets nothing through,
 * and it is reported. Pure and deterministic: the workflow runs it.
 */
export function applyToolPolicyPipeline(
  tools: readonly string[],
  steps: readonly ToolPolicyStep[],
): ToolPolicyResult {
  const normalized = new Map(tools.map((tool) => [tool, normalizeToolName(tool)]));
  const present = new Set(normalized.values());
  const removedBy = new Map<string, string>();
  const warnings = new Set<string>();
  let kept = [...tools];

  for (const step of steps) {
    const allow = step.allow && [...step.allow, ...(step.alsoAllow ?? [])].map(compileEntry);
    const deny = (step.deny ?? []).map(compileEntry);
    const lists: [EntryList, readonly string[] | undefined][] = [
      ['allow', step.catalogAllow ? undefined : step.allow],
      ['alsoAllow', step.alsoAllow],
      ['deny', step.deny],
    ];
    for (const [list, entries] of lists) {
      for (const entry of entries ?? []) {
        const warning = checkEntry(compileEntry(entry), list, present, removedBy);
        if (warning) warnings.add(`tool policy (${step.label}): ${warning}`);
      }
    }
    kept = kept.filter((tool) => {
      const name = normalized.get(tool)!;
      const passes =
        !deny.some((entry) => entry.matches(name)) && (!allow || allow.some((entry) => entry.matches(name)));
      if (!passes) removedBy.set(name, step.label);
      return passes;
    });
  }
  return { tools: kept, warnings: [...warnings] };
}

interface CompiledEntry {
  text: string;
  kind: 'name' | 'group' | 'pattern' | 'empty';
  /** A group's members; undefined for an unknown group. */
  members?: readonly string[];
  matches(name: string): boolean;
}

function compileEntry(entry: string): CompiledEntry {
  const text = normalizeToolName(entry);
  if (!text) return { text, kind: 'empty', matches: () => false };
  if (text.startsWith('group:')) {
    const members = TOOL_GROUPS[text];
    return { text, kind: 'group', members, matches: (name) => members?.includes(name) ?? false };
  }
  if (text.includes('*')) {
    const escaped = text.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '.*');
    const pattern = new RegExp(`^${escaped}$`);
    return { text, kind: 'pattern', matches: (name) => pattern.test(name) };
  }
  return { text, kind: 'name', matches: (name) => name === text };
}

/** Why an entry a person wrote deserves a look, or undefined when it does what it says. */
function checkEntry(
  entry: CompiledEntry,
  list: EntryList,
  present: ReadonlySet<string>,
  removedBy: ReadonlyMap<string, string>,
): string | undefined {
  const where = `in ${list}`;
  const quoted = JSON.stringify(entry.text);
  if (entry.kind === 'empty') return undefined;
  if (entry.kind === 'group' && !entry.members) return `unknown group ${quoted} ${where}`;
  const matched = [...present].filter((name) => entry.matches(name));
  if (matched.length === 0) {
    if (entry.kind === 'pattern') return `${quoted} ${where} matches no tool`;
    const known = entry.kind === 'group' || CATALOG_TOOL_NAMES.has(entry.text);
    if (!known) return `unknown tool ${quoted} ${where}`;
    // Denying a tool this worker lacks anyway is harmless; allowing one is probably a surprise.
    return list === 'deny' ? undefined : `${quoted} ${where} is not available on this worker`;
  }
  if (list === 'deny') return undefined;
  const removers = [...new Set(matched.map((name) => removedBy.get(name)))];
  if (removers.every((label) => label !== undefined)) {
    return `${quoted} ${where} has no effect: already removed by ${removers.join(', ')}`;
  }
  return undefined;
}
