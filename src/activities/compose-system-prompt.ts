import os from 'node:os';
import path from 'node:path';
import type { SystemPromptRequest } from '../shared/system-prompt';
import { readAgentsFiles } from './agents-files';
import { defaultSystemPrompt } from './default-system-prompt';

export interface SystemPromptDeps {
  /** The workspace of a conversation that names none. */
  defaultWorkspace: string;
  /** Directories workspaces must lie in; AGENTS.md files are read from the one holding the workspace down. */
  workspaceRoots?: string[];
  /** The worker's clock; the system's when absent. */
  now?: () => Date;
}

/**
 * The default system prompt for a run of a conversation that sets none, written by the worker
 * that runs the conversation (it knows the workspace, the day and the platform) and recorded in
 * the run's history, so a replay sends the same prompt and `history --at` shows it.
 */
export function createComposeSystemPrompt(deps: SystemPromptDeps) {
  return async function composeSystemPrompt(request: SystemPromptRequest): Promise<string> {
    const workspace = path.resolve(request.workspace ?? deps.defaultWorkspace);
    const root = rootHolding(workspace, [...(deps.workspaceRoots ?? []), deps.defaultWorkspace]);
    return defaultSystemPrompt({
      workspace,
      date: utcDate((deps.now ?? (() => new Date()))()),
      platform: `${os.platform()} ${os.arch()}`,
      tools: request.tools,
      ...(request.approvalTimeoutMs !== undefined ? { approvalTimeoutMs: request.approvalTimeoutMs } : {}),
      agentsFiles: await readAgentsFiles(workspace, root),
    });
  };
}

/** The outermost of `roots` that holds `workspace`; the workspace itself when none does. */
function rootHolding(workspace: string, roots: string[]): string {
  const holding = roots
    .map((root) => path.resolve(root))
    .filter((root) => {
      const relative = path.relative(root, workspace);
      return !relative.startsWith('..') && !path.isAbsolute(relative);
    });
  return holding.sort((a, b) => a.length - b.length)[0] ?? workspace;
}

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** The UTC day, as the conversation keeps its default prompt for a UTC day. */
function utcDate(now: Date): string {
  return `${now.toISOString().slice(0, 10)} (${WEEKDAYS[now.getUTCDay()]}, UTC)`;
}
