import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import path from 'node:path';

const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * Linux names every open descriptor `/proc/self/fd/N`, a link the kernel follows to the open file
 * itself, not to a path: `/proc/self/fd/N/name` is looked up in the directory held open as N, the
 * way `openat(N, "name")` would, however that directory was renamed or replaced since. Node has no
 * `openat`; this is how the file tools get its guarantee. Elsewhere there is no such link and
 * entries are reached by path (checked one component at a time, but not race-free).
 */
export const DESCRIPTOR_PATHS = process.platform === 'linux';

/**
 * A directory open by descriptor. Calls that do not follow their last component (open with
 * O_NOFOLLOW, lstat, readlink, rename, link, unlink, mkdir, rmdir) on `entry(name)` act on `name`
 * in exactly this directory: no component before it is looked up by name again.
 */
export class HeldDirectory {
  private constructor(
    private readonly handle: FileHandle,
    /** Its path when it was opened, for messages and for platforms without descriptor paths. */
    readonly path: string,
  ) {}

  /** Opens the directory at `directory`, refusing a symbolic link there. */
  static async open(directory: string): Promise<HeldDirectory> {
    return new HeldDirectory(await open(directory, DIRECTORY_FLAGS), directory);
  }

  /** A path that names `name` (one component, never `.` or `..`) inside this directory. */
  entry(name: string): string {
    if (name === '' || name === '.' || name === '..' || name.includes('/'))
      throw new Error(`not a single directory entry: ${JSON.stringify(name)}`);
    return DESCRIPTOR_PATHS ? `/proc/self/fd/${this.handle.fd}/${name}` : path.join(this.path, name);
  }

  /** This directory itself, for `readdir` and the like. */
  self(): string {
    return DESCRIPTOR_PATHS ? `/proc/self/fd/${this.handle.fd}` : this.path;
  }

  /** The subdirectory `name`; rejects with ELOOP or ENOTDIR when it is a link or not a directory. */
  async child(name: string): Promise<HeldDirectory> {
    return new HeldDirectory(await open(this.entry(name), DIRECTORY_FLAGS), path.join(this.path, name));
  }

  async close(): Promise<void> {
    await this.handle.close().catch(() => undefined);
  }
}

/**
 * An error whose message names entries by their descriptor paths, reworded with the entry names
 * alone: the model reads names from the workspace, not the worker's descriptors.
 */
export function withoutDescriptorPaths<T>(error: T): T {
  // Not `instanceof Error`: errors made in another realm (a vm context, as under jest) are not.
  const errorLike = error as { message?: unknown };
  if (typeof errorLike.message === 'string')
    errorLike.message = errorLike.message.replace(/\/proc\/self\/fd\/\d+\/?/g, '');
  return error;
}
