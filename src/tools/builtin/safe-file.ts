import { randomBytes } from 'node:crypto';
import { type Stats, constants } from 'node:fs';
import { type FileHandle, lstat, open, rename, unlink } from 'node:fs/promises';
import { ToolError } from '../tool-error';
import { storageError } from './fs-errors';
import { type HeldDirectory, withoutDescriptorPaths } from '../held-directory';
import type { Reached } from '../workspace';

/**
 * The one way file tools touch a file a model named. A FIFO opened for reading without O_NONBLOCK
 * waits for a writer inside libuv's small thread pool, and a few such waits starve every file, DNS
 * and compression call of the worker; a device reads forever. So: the path is checked with lstat
 * (no open, so opening a device has no side effect), opened with O_NONBLOCK and O_NOFOLLOW, the
 * open descriptor checked again with fstat (the path may have been swapped meanwhile) and its size
 * capped before a byte is read; the content is read from that descriptor, never by path again.
 * Writes go to a new temporary file beside the target and are renamed over it, so nothing ever
 * opens the target for writing. Files are named by an open directory and a name in it (see
 * Workspace), never by a path walked again; `shown` is how the model is shown the file.
 */

/** A file: its name in an open directory of the workspace, and how the model is shown it. */
export interface FilePlace {
  dir: HeldDirectory;
  name: string;
  shown: string;
}

/** The file a walk reached; a directory or a path below a missing directory is refused. */
export function fileAt(reached: Reached): FilePlace {
  const [name, ...rest] = reached.names;
  if (name === undefined) {
    throw new ToolError(
      'InvalidArgs',
      `${reached.shown} is a directory, not a regular file; use list_directory or glob to see what it holds`,
    );
  }
  if (rest.length > 0) throw new ToolError('FileNotFound', `no such file or directory: ${reached.shown}`);
  return { dir: reached.dir, name, shown: reached.shown };
}

/** Files over the cap are refused before any byte is read; `advice` says what to do instead. */
export interface ReadLimit {
  maxBytes: number;
  advice: string;
}

const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
const CHUNK_BYTES = 1024 * 1024;
const MIN_CHUNK_BYTES = 64 * 1024;

/** The whole content of the regular file at `place`. */
export async function readRegularFile(place: FilePlace, limit: ReadLimit): Promise<Buffer> {
  return withRegularFile(place, (handle, info) => {
    assertWithin(info.size, place.shown, limit);
    return readAll(handle, info.size, place.shown, limit);
  });
}

/**
 * The first `maxBytes` bytes of the regular file at `place`, and whether they are all of it: the
 * rest of a larger file is never read.
 */
export async function readRegularHead(
  place: FilePlace,
  maxBytes: number,
): Promise<{ bytes: Buffer; whole: boolean }> {
  return withRegularFile(place, async (handle) => {
    const buffer = Buffer.alloc(maxBytes + 1);
    let total = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, total, buffer.length - total, null);
      if (bytesRead === 0) break;
      total += bytesRead;
      if (total === buffer.length) break;
    }
    return { bytes: buffer.subarray(0, Math.min(total, maxBytes)), whole: total <= maxBytes };
  });
}

/** Opens the regular file at `place` without following a link or waiting on a FIFO, for `use`. */
async function withRegularFile<T>(
  place: FilePlace,
  use: (handle: FileHandle, info: Stats) => Promise<T>,
): Promise<T> {
  const { shown } = place;
  const file = place.dir.entry(place.name);
  assertRegular(await lstat(file).catch((error: unknown) => rethrow(error, shown)), shown);
  const handle = await open(file, READ_FLAGS).catch((error: unknown) => rethrow(error, shown));
  try {
    const info = await handle.stat();
    assertRegular(info, shown);
    return await use(handle, info);
  } catch (error) {
    return rethrow(error, shown);
  } finally {
    await handle.close();
  }
}

/** {@link readRegularFile} decoded as UTF-8. */
export async function readRegularText(place: FilePlace, limit: ReadLimit): Promise<string> {
  return (await readRegularFile(place, limit)).toString('utf8');
}

/**
 * Replaces (or creates) `file` with `content`: written to a temporary file in the same directory,
 * created exclusively, then renamed over the target, so the target is never opened and readers see
 * the old content or the new one whole. An existing target must be a regular file; its permission
 * bits are kept. A new file gets the mode a plain create would give (0666 less the umask).
 */
export async function writeRegularFile(place: FilePlace, content: string | Buffer): Promise<void> {
  const { shown } = place;
  const file = place.dir.entry(place.name);
  const existing = await lstat(file).then(
    (info) => info,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      return rethrow(error, shown);
    },
  );
  if (existing) assertRegular(existing, shown);
  const temporary = place.dir.entry(`.${place.name}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    const handle = await open(temporary, CREATE_FLAGS, existing ? 0o600 : 0o666);
    try {
      await handle.writeFile(content);
      if (existing) await handle.chmod(existing.mode & 0o7777);
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    return rethrow(error, shown);
  }
}

/** What kind of file `info` describes, in the words of the error message. */
export function fileKind(info: Stats): string {
  if (info.isFile()) return 'a regular file';
  if (info.isDirectory()) return 'a directory';
  if (info.isFIFO()) return 'a FIFO';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice()) return 'a character device';
  if (info.isBlockDevice()) return 'a block device';
  if (info.isSymbolicLink()) return 'a symbolic link';
  return 'a special file';
}

function assertRegular(info: Stats, shown: string): void {
  if (info.isFile()) return;
  if (info.isDirectory()) {
    throw new ToolError(
      'InvalidArgs',
      `${shown} is a directory, not a regular file; use list_directory or glob to see what it holds`,
    );
  }
  throw new ToolError(
    'InvalidArgs',
    `${shown} is ${fileKind(info)}, not a regular file; file tools read and write only regular files`,
  );
}

function assertWithin(size: number, shown: string, limit: ReadLimit): void {
  if (size > limit.maxBytes) {
    throw new ToolError(
      'InvalidArgs',
      `${shown} is ${size} bytes; this tool handles files of at most ${limit.maxBytes} bytes. ${limit.advice}`,
    );
  }
}

/** Reads to end of file, at most one byte past the cap: a file growing after fstat is caught too. */
async function readAll(handle: FileHandle, size: number, shown: string, limit: ReadLimit): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for (;;) {
    const room = limit.maxBytes + 1 - total;
    const chunk = Buffer.allocUnsafe(
      Math.min(CHUNK_BYTES, room, Math.max(size - total + 1, MIN_CHUNK_BYTES)),
    );
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, null);
    if (bytesRead === 0) break;
    chunks.push(chunk.subarray(0, bytesRead));
    total += bytesRead;
    assertWithin(total, shown, limit);
  }
  return Buffer.concat(chunks, total);
}

/** Node's errors for the paths involved, as the tool errors the model reads. */
function rethrow(error: unknown, shown: string): never {
  if (error instanceof ToolError) throw error;
  switch ((error as NodeJS.ErrnoException).code) {
    case 'ENOENT':
      throw new ToolError('FileNotFound', `no such file or directory: ${shown}`);
    case 'EISDIR':
      throw new ToolError('InvalidArgs', `${shown} is a directory, not a regular file`);
    case 'ENOTDIR':
      throw new ToolError('InvalidArgs', `a parent of ${shown} is not a directory`);
    case 'EACCES':
    case 'EPERM':
      throw new ToolError('PermissionDenied', `permission denied: ${shown}`);
    case 'ELOOP':
      throw new ToolError(
        'InvalidPath',
        `${shown} is a symbolic link that changed while it was being opened; try again`,
      );
    case 'ENXIO':
    case 'ENODEV':
      throw new ToolError('InvalidArgs', `${shown} is a special file, not a regular file`);
    default:
      throw storageError(error, shown) ?? withoutDescriptorPaths(error);
  }
}
