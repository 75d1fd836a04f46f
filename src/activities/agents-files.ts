import path from 'node:path';
import { AGENTS_MD_MAX_CHARS } from '../shared/system-prompt';
import { fileAt, readRegularHead } from '../tools/builtin/safe-file';
import { ToolError } from '../tools/tool-error';
import { Workspace } from '../tools/workspace';

/** An AGENTS.md file: its text, or why it was not read. */
export type AgentsFile =
  | {
      /** Absolute path of the file. */
      path: string;
      text: string;
    }
  | {
      path: string;
      /** Why the file there was not read (a link out of the root, a FIFO, a device). */
      skipped: string;
    };

/**
 * UTF-8 takes at most 3 bytes per UTF-16 code unit, so 3 × (n + 1) bytes hold more than n code
 * units whenever the file has more, even when the last character is cut in two.
 */
const BYTES_PER_CHAR = 3;

/**
 * The AGENTS.md files from `root` down to `workspace`, outermost first, so the nearest file (the
 * workspace's own) comes last and has the last word. Only the workspace's own when it is not inside
 * `root`. The files come from a repository the model or anyone may have written, so each is reached
 * as the file tools reach theirs (see Workspace): only a regular file whose real path lies inside
 * `root` (or the workspace, when that is outside it) is read, a link leading out is not followed,
 * a FIFO or device is never waited on or read, and no more is read than the bound lets through.
 * Missing files are left out; files there but not read are listed with the reason. Together the
 * texts are cut to `maxChars`.
 */
export async function readAgentsFiles(
  workspace: string,
  root: string,
  maxChars = AGENTS_MD_MAX_CHARS,
): Promise<AgentsFile[]> {
  const inside = isInside(workspace, root);
  const base = inside ? root : workspace;
  let confined: Workspace;
  try {
    confined = new Workspace(path.resolve(base));
  } catch {
    return [];
  }
  const found: AgentsFile[] = [];
  let left = maxChars;
  for (const directory of inside ? directoriesBetween(root, workspace) : ['']) {
    if (left <= 0) break;
    const file = path.join(base, directory, 'AGENTS.md');
    const read = await readBounded(confined, path.join(directory, 'AGENTS.md'), left);
    if (read === undefined) continue;
    if (typeof read !== 'string') {
      found.push({ path: file, skipped: read.skipped });
      continue;
    }
    if (!read.trim()) continue;
    const kept =
      read.length > left
        ? `${read.slice(0, left)}\n[… cut: the AGENTS.md files are limited to ${maxChars} characters together]`
        : read;
    left -= read.length;
    found.push({ path: file, text: kept.trimEnd() });
  }
  return found;
}

/**
 * The text of `relative` in the workspace, of more than `chars` characters when the file is longer;
 * undefined when there is no such file.
 */
async function readBounded(
  confined: Workspace,
  relative: string,
  chars: number,
): Promise<string | { skipped: string } | undefined> {
  try {
    const { bytes } = await confined.at(relative, {}, (reached) =>
      readRegularHead(fileAt(reached), BYTES_PER_CHAR * (chars + 1)),
    );
    return bytes.toString('utf8');
  } catch (error) {
    if (!(error instanceof ToolError)) return { skipped: 'it could not be read' };
    switch (error.kind) {
      case 'FileNotFound':
        return undefined;
      case 'InvalidPath':
        return { skipped: 'it is a symbolic link leading out of the workspace root' };
      case 'PermissionDenied':
        return { skipped: 'permission denied' };
      default:
        return { skipped: 'it is not a regular file' };
    }
  }
}

function isInside(workspace: string, root: string): boolean {
  const relative = path.relative(root, workspace);
  return !relative.startsWith('..') && !path.isAbsolute(relative);
}

/** `root` (as ''), each directory below it on the way to `workspace`, and `workspace`, relative to `root`. */
function directoriesBetween(root: string, workspace: string): string[] {
  const relative = path.relative(root, workspace);
  const directories = [''];
  if (relative === '') return directories;
  for (const part of relative.split(path.sep)) directories.push(path.join(directories.at(-1)!, part));
  return directories;
}
