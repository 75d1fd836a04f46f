import { realpathSync } from 'node:fs';
import { lstat, mkdir, readlink } from 'node:fs/promises';
import path from 'node:path';
import { ToolError } from './tool-error';
import { HeldDirectory, withoutDescriptorPaths } from './held-directory';

/** Symbolic links followed in one path at most, as the kernel allows. */
const MAX_LINKS = 40;

/**
 * Where a path leads inside the workspace: the directory that holds it, open, and the names below
 * that directory still to come. One name: the entry itself (which may not exist yet); none: the
 * directory itself; more: directories that do not exist yet, then the entry.
 */
export interface Reached {
  dir: HeldDirectory;
  names: string[];
  /** The path from the workspace root, links resolved: how the model is shown it. */
  shown: string;
  /** The canonical absolute path, for messages and checks only: never open it. */
  absolute: string;
}

export interface ReachOptions {
  /** Make missing directories on the way (not the last name). Default false: report them in `names`. */
  create?: boolean;
}

/**
 * The directory file and command tools are confined to. A path is walked one component at a time
 * from a descriptor held on the root, each directory opened relative to the one before without
 * following links; a link met on the way is read and its target walked the same way, and one that
 * leads out of the root (by `..` or an absolute path elsewhere) is refused with InvalidPath. What a
 * tool then opens, creates or renames is named relative to the last directory's descriptor, so a
 * directory swapped for a link meanwhile (by a command running beside the tool) leads nowhere new.
 */
export class Workspace {
  readonly root: string;

  constructor(root: string) {
    if (!path.isAbsolute(root)) throw new Error(`workspace must be an absolute path: ${root}`);
    this.root = realpathSync(root);
  }

  /**
   * Walks `requested` beneath the root and hands `use` where it leads; every directory opened on the
   * way is closed when `use` settles.
   */
  async at<T>(requested: string, options: ReachOptions, use: (reached: Reached) => Promise<T>): Promise<T> {
    const reached = await this.reach(requested, options);
    try {
      return await use(reached);
    } finally {
      await reached.dir.close();
    }
  }

  /** The canonical absolute path for `requested`, checked to lie inside; the target need not exist yet. */
  async resolve(requested: string): Promise<string> {
    return this.at(requested, {}, async (reached) => reached.absolute);
  }

  /** The path as the model should see it: relative to the workspace root. */
  relative(absolute: string): string {
    return path.relative(this.root, absolute) || '.';
  }

  contains(canonical: string): boolean {
    return canonical === this.root || canonical.startsWith(this.below);
  }

  /** What every path below the root starts with (the root `/` is its own). */
  private get below(): string {
    return this.root.endsWith(path.sep) ? this.root : this.root + path.sep;
  }

  /** Walks `requested` beneath the root; the caller closes the `dir` it is handed. */
  async reach(requested: string, options: ReachOptions): Promise<Reached> {
    const todo = this.componentsOf(requested, requested);
    const held: HeldDirectory[] = [await HeldDirectory.open(this.root)];
    const names: string[] = [];
    /** Names below the last held directory: the entry, after directories that do not exist yet. */
    let below: string[] = [];
    let links = 0;
    const fail = async (error: unknown): Promise<never> => {
      for (const dir of held) await dir.close();
      throw error;
    };
    const follow = async (dir: HeldDirectory, name: string): Promise<void> => {
      if (++links > MAX_LINKS)
        return fail(new ToolError('InvalidPath', `too many symbolic links in ${requested}`));
      let target: string;
      try {
        target = await readlink(dir.entry(name));
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // It stopped being a link (or was removed) since it was looked at: look at it again.
        if (code === 'EINVAL' || code === 'ENOENT') {
          todo.unshift(name);
          return;
        }
        return fail(fsError(error, requested));
      }
      if (path.isAbsolute(target)) {
        const inside = await Promise.resolve()
          .then(() => this.componentsOf(target, requested))
          .catch(fail);
        while (held.length > 1) await held.pop()!.close();
        names.length = 0;
        todo.unshift(...inside);
      } else {
        todo.unshift(...target.split('/'));
      }
    };

    while (todo.length > 0) {
      const part = todo.shift()!;
      if (part === '' || part === '.') continue;
      if (part === '..') {
        if (below.length > 0) below.pop();
        else if (held.length > 1) {
          await held.pop()!.close();
          names.pop();
        } else return fail(new ToolError('InvalidPath', `path is outside the workspace: ${requested}`));
        continue;
      }
      if (below.length > 0) {
        below.push(part);
        continue;
      }
      const dir = held.at(-1)!;
      const last = todo.every((rest) => rest === '' || rest === '.');
      if (last) {
        const info = await lstat(dir.entry(part)).catch((error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT') return undefined;
          return fail(fsError(error, requested));
        });
        if (info?.isSymbolicLink()) {
          await follow(dir, part);
          continue;
        }
        below = [part];
        break;
      }
      const child = await this.descend(dir, part, options, requested).catch(fail);
      if (child === 'link') await follow(dir, part);
      else if (child === 'missing') below = [part];
      else {
        held.push(child);
        names.push(part);
      }
    }
    const dir = held.pop()!;
    for (const above of held) await above.close();
    const shownParts = [...names, ...below];
    return {
      dir,
      names: below,
      shown: shownParts.join('/') || '.',
      absolute: path.join(this.root, ...shownParts),
    };
  }

  /** `part` of `dir` as an open directory, or what it is instead. */
  private async descend(
    dir: HeldDirectory,
    part: string,
    options: ReachOptions,
    requested: string,
  ): Promise<HeldDirectory | 'link' | 'missing'> {
    for (let attempt = 0; ; attempt++) {
      if (attempt > 5)
        throw new ToolError('InvalidPath', `${requested} kept changing while it was being opened; try again`);
      try {
        return await dir.child(part);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') {
          if (!options.create) return 'missing';
          await mkdir(dir.entry(part)).catch((made: NodeJS.ErrnoException) => {
            if (made.code !== 'EEXIST') throw fsError(made, requested);
          });
          continue;
        }
        if (code !== 'ELOOP' && code !== 'ENOTDIR') throw fsError(error, requested);
        const info = await lstat(dir.entry(part)).catch(() => undefined);
        if (info?.isSymbolicLink()) return 'link';
        if (info && !info.isDirectory())
          throw new ToolError('InvalidArgs', `a parent of ${requested} is a file, not a directory`);
        // It changed between the open and the look: look again.
      }
    }
  }

  /** `requested` as components below the root, lexically normalised; refuses what lies outside. */
  private componentsOf(requested: string, shownAs: string): string[] {
    if (requested.includes('\0')) throw new ToolError('InvalidPath', 'path contains a NUL byte');
    let relative: string;
    if (path.isAbsolute(requested)) {
      const normal = path.normalize(requested);
      if (normal !== this.root && !normal.startsWith(this.below))
        throw new ToolError('InvalidPath', `path is outside the workspace: ${shownAs}`);
      relative = path.relative(this.root, normal);
    } else {
      relative = path.normalize(requested);
    }
    const parts = relative.split(path.sep).filter((part) => part !== '' && part !== '.');
    if (parts[0] === '..') throw new ToolError('InvalidPath', `path is outside the workspace: ${shownAs}`);
    return parts;
  }
}

function fsError(error: unknown, requested: string): unknown {
  switch ((error as NodeJS.ErrnoException).code) {
    case 'EACCES':
    case 'EPERM':
      return new ToolError('PermissionDenied', `permission denied: ${requested}`);
    case 'ENAMETOOLONG':
      return new ToolError('InvalidArgs', `a name in ${requested} is too long`);
    default:
      return withoutDescriptorPaths(error);
  }
}
