import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { z } from 'zod';
import type { AgentTool, ToolResult, ToolUpdate } from '../../src/tools/tool';
import { ToolError } from '../../src/tools/tool-error';
import type { Workspace } from '../../src/tools/workspace';

/** A fresh directory under the OS temp dir, canonical (so comparisons with Workspace.root hold). */
export async function makeTempDir(prefix = 'durable-agent-unit-'): Promise<string> {
  return realpath(await mkdtemp(path.join(os.tmpdir(), prefix)));
}

export async function removeDir(dir: string | undefined): Promise<void> {
  if (dir) await rm(dir, { recursive: true, force: true });
}

/** Calls a tool the way the activity does: arguments parsed through its schema so defaults apply. */
export function runTool<T extends z.ZodType>(
  tool: AgentTool<T>,
  workspace: Workspace,
  args: unknown,
  options: { signal?: AbortSignal; onUpdate?: (update: ToolUpdate) => void } = {},
): Promise<ToolResult> {
  return tool.execute(
    'call_unit',
    tool.parameters.parse(args),
    options.signal ?? new AbortController().signal,
    options.onUpdate ?? (() => {}),
    { workspace, conversationId: 'c', agentId: 'default' },
  );
}

/** The concatenated text blocks of a result. */
export function resultText(result: ToolResult): string {
  return result.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}

/** The ToolError a promise rejects with; fails if it resolves or rejects with anything else. */
export async function toolErrorOf(promise: Promise<unknown>): Promise<ToolError> {
  let outcome: { resolved: unknown } | { rejected: unknown };
  try {
    outcome = { resolved: await promise };
  } catch (error) {
    outcome = { rejected: error };
  }
  if ('resolved' in outcome) {
    throw new Error(`expected a ToolError, but it resolved with ${JSON.stringify(outcome.resolved)}`);
  }
  if (!(outcome.rejected instanceof ToolError)) {
    throw new Error(`expected a ToolError, but it rejected with ${String(outcome.rejected)}`);
  }
  return outcome.rejected;
}
