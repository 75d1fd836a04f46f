import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { AGENTS_MD_MAX_CHARS } from '../shared/system-prompt';

export interface AgentsFile {
  /** Absolute path of the file. */
  path: string;
  text: string;
}

/**
 * The AGENTS.md files from `root` down to `workspace`, outermost first, so the nearest file (the
 * workspace's own) comes last and has the last word. Only the workspace's own when it is not inside
 * `root`. Files that are missing or unreadable are skipped; together they are cut to `maxChars`.
 */
export async function readAgentsFiles(
  workspace: string,
  root: string,
  maxChars = AGENTS_MD_MAX_CHARS,
): Promise<AgentsFile[]> {
  const found: AgentsFile[] = [];
  let left = maxChars;
  for (const directory of directoriesFromRoot(workspace, root)) {
    if (left <= 0) break;
    const file = path.join(directory, 'AGENTS.md');
    const text = await readFile(file, 'utf8').catch(() => undefined);
    if (text === undefined || !text.trim()) continue;
    const kept =
      text.length > left
        ? `${text.slice(0, left)}\n[… cut: the AGENTS.md files are limited to ${maxChars} characters together]`
        : text;
    left -= text.length;
    found.push({ path: file, text: kept.trimEnd() });
  }
  return found;
}

/** `root`, each directory below it on the way to `workspace`, and `workspace`; `workspace` alone when outside `root`. */
function directoriesFromRoot(workspace: string, root: string): string[] {
  const relative = path.relative(root, workspace);
  if (relative === '') return [workspace];
  if (relative.startsWith('..') || path.isAbsolute(relative)) return [workspace];
  const directories = [root];
  for (const part of relative.split(path.sep)) directories.push(path.join(directories.at(-1)!, part));
  return directories;
}
