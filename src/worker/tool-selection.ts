import { TOOL_GROUPS } from '../shared/tool-catalog';
import type { RegisteredTool } from '../tools/tool';

/**
 * One entry of a worker's tool list: a built-in tool by name (`read`), a group of built-ins
 * (`group:fs`), or a tool of your own made with `defineTool`.
 */
export type ToolChoice = string | RegisteredTool;

/**
 * The tools a worker offers: the built-ins its entries name, in catalog order, then its own tools in
 * the order given. Without entries, every built-in. An unknown name or group, or two tools of one
 * name, is an error here rather than a tool that silently never appears.
 */
export function selectTools(
  choices: readonly ToolChoice[] | undefined,
  builtins: readonly RegisteredTool[],
): RegisteredTool[] {
  if (choices === undefined) return [...builtins];
  const named = new Set<string>();
  const own: RegisteredTool[] = [];
  for (const choice of choices) {
    if (typeof choice === 'string') for (const name of builtinNames(choice, builtins)) named.add(name);
    else own.push(choice);
  }
  const selected = [...builtins.filter((tool) => named.has(tool.name)), ...own];
  const seen = new Set<string>();
  for (const tool of selected) {
    if (seen.has(tool.name)) throw new Error(`two tools are named ${JSON.stringify(tool.name)}`);
    seen.add(tool.name);
  }
  return selected;
}

function builtinNames(choice: string, builtins: readonly RegisteredTool[]): readonly string[] {
  const available = new Set(builtins.map((tool) => tool.name));
  if (choice.startsWith('group:')) {
    const members = TOOL_GROUPS[choice];
    if (!members) {
      throw new Error(
        `unknown tool group ${JSON.stringify(choice)}; the groups are ${Object.keys(TOOL_GROUPS).join(', ')}`,
      );
    }
    return members.filter((name) => available.has(name));
  }
  if (!available.has(choice)) {
    throw new Error(
      `no built-in tool is named ${JSON.stringify(choice)}; the built-ins are ${[...available].join(', ')}`,
    );
  }
  return [choice];
}
