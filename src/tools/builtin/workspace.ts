import { realpathSync } from 'node:fs';
import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';
import { ToolError } from '../tool-error';

/**
 * The directory file and command tools are confined to. Paths are resolved against it, `..` and
 * symlinks included, and refused with InvalidPath when the real location is outside.
 */
export class Workspace {
  readonly root: string;

  constructor(root: string) {
    if (!path.isAbsolute(root)) throw new Error(`workspace must be an absolute path: ${root}`);
    this.root = realpathSync(root);
  }

  /** The canonical absolute path for `requested`; the target need not exist yet (its nearest existing ancestor is checked). */
  async resolve(requested: string): Promise<string> {
    if (requested.includes('\0')) throw new ToolError('InvalidPath', 'path contains a NUL byte');
    const joined = path.resolve(this.root, requested);
    const canonical = await canonicalize(joined).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOTDIR')
        throw new ToolError('InvalidArgs', `a parent of ${requested} is a file, not a directory`);
      if (error.code === 'ELOOP')
        throw new ToolError('InvalidPath', `too many symbolic links in ${requested}`);
      throw error;
    });
    if (!this.contains(canonical)) {
      throw new ToolError('InvalidPath', `path is outside the workspace: ${requested}`);
    }
    return canonical;
  }

  /** The path as the model should see it: relative to the workspace root. */
  relative(absolute: string): string {
    return path.relative(this.root, absolute) || '.';
  }

  /** `resolve` and `relative` at once: the canonical path, and how to name it to the model. */
  async locate(requested: string): Promise<{ absolute: string; shown: string }> {
    const absolute = await this.resolve(requested);
    return { absolute, shown: this.relative(absolute) };
  }

  contains(canonical: string): boolean {
    return canonical === this.root || canonical.startsWith(this.root + path.sep);
  }
}

async function canonicalize(absolute: string): Promise<string> {
  const missing: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      return path.join(await realpath(current), ...missing.reverse());
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      // A link whose target is missing would be followed by a later write: refuse it outright.
      if (
        await lstat(current).then(
          (stat) => stat.isSymbolicLink(),
          () => false,
        )
      ) {
        throw new ToolError('InvalidPath', `path goes through a dangling symbolic link: ${current}`);
      }
      const parent = path.dirname(current);
      if (parent === current) return absolute;
      missing.push(path.basename(current));
      current = parent;
    }
  }
}
