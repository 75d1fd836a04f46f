import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import path from 'node:path';
import { readRegularText } from './safe-file';

/** The largest file a commit re-reads to check it is unchanged; callers read nothing larger. */
const MAX_CHECKED_BYTES = 64 * 1024 * 1024;

/** One file's new state: its whole new content, or gone. `expected` is the content the change was computed from. */
export type FileChange =
  | { kind: 'add'; path: string; content: string }
  | { kind: 'update'; path: string; content: string; expected: string }
  | { kind: 'delete'; path: string; expected: string };

/**
 * The file system calls that change files, so tests can make one of them fail. The check that a
 * target still holds what a change was computed from always reads through the regular-file reader,
 * which refuses FIFOs and devices instead of waiting on them.
 */
export type FileOps = Pick<
  typeof fs,
  'writeFile' | 'rename' | 'link' | 'unlink' | 'mkdir' | 'rmdir' | 'copyFile' | 'stat' | 'chmod'
>;

/** A commit that failed; nothing it touched was left changed unless `rollbackFailures` says otherwise. */
export class FileChangesFailed extends Error {
  constructor(
    message: string,
    readonly rollbackFailures: string[],
  ) {
    super(message);
  }
}

type Done =
  { kind: 'replaced' | 'deleted'; target: string; backup: string } | { kind: 'added'; target: string };

/**
 * Makes every change or none (paths must be absolute and distinct). New contents are first written
 * to temporary files beside their targets and the targets checked to still hold what the changes
 * were computed from; only then are the temporary files renamed into place, each rename atomic,
 * with the old files kept as backups until all succeeded. A failure at any step undoes the steps
 * before it. A process killed half-way leaves the backups (`.<name>.<id>.apply-patch.orig`) behind.
 */
export async function commitFileChanges(changes: FileChange[], ops: FileOps = fs): Promise<void> {
  const id = randomBytes(4).toString('hex');
  const sibling = (target: string, suffix: string) =>
    path.join(path.dirname(target), `.${path.basename(target)}.${id}.apply-patch.${suffix}`);
  const temps = new Map<string, string>();
  const createdDirs: string[] = [];
  const done: Done[] = [];
  const rollbackFailures: string[] = [];
  const attempt = async (what: string, step: () => Promise<unknown>) => {
    try {
      await step();
    } catch (error) {
      rollbackFailures.push(`${what}: ${(error as Error).message}`);
    }
  };
  const undo = async () => {
    for (const step of done.reverse()) {
      if (step.kind === 'added') await attempt(`removing ${step.target}`, () => ops.unlink(step.target));
      else
        await attempt(`restoring ${step.target} from ${step.backup}`, () =>
          ops.rename(step.backup, step.target),
        );
    }
    for (const temp of temps.values())
      await attempt(`removing ${temp}`, () => ops.unlink(temp).catch(ignoreMissing));
    for (const dir of createdDirs.reverse()) await attempt(`removing ${dir}`, () => ops.rmdir(dir));
  };

  try {
    for (const change of changes) {
      if (change.kind === 'delete') continue;
      const created = await ops.mkdir(path.dirname(change.path), { recursive: true });
      if (created) createdDirs.push(...directoriesBetween(created, path.dirname(change.path)));
      const temp = sibling(change.path, 'tmp');
      await ops.writeFile(temp, change.content, { flag: 'wx' });
      temps.set(change.path, temp);
      if (change.kind === 'update') await ops.chmod(temp, (await ops.stat(change.path)).mode & 0o7777);
    }
    for (const change of changes) {
      if (change.kind === 'add') continue;
      const current = await readRegularText(change.path, change.path, {
        maxBytes: MAX_CHECKED_BYTES,
        advice: 'It grew while the patch was being applied.',
      });
      if (current !== change.expected)
        throw new Error(`${change.path} changed while the patch was being applied`);
    }
    for (const change of changes) {
      if (change.kind === 'add') {
        // A link, unlike a rename, refuses to replace a file that appeared meanwhile.
        await ops.link(temps.get(change.path)!, change.path);
        done.push({ kind: 'added', target: change.path });
        await ops.unlink(temps.get(change.path)!);
        temps.delete(change.path);
      } else if (change.kind === 'update') {
        const backup = sibling(change.path, 'orig');
        await ops.link(change.path, backup).catch(() => ops.copyFile(change.path, backup));
        await ops.rename(temps.get(change.path)!, change.path).catch(async (error: unknown) => {
          await ops.unlink(backup).catch(ignoreMissing);
          throw error;
        });
        temps.delete(change.path);
        done.push({ kind: 'replaced', target: change.path, backup });
      } else {
        const backup = sibling(change.path, 'orig');
        await ops.rename(change.path, backup);
        done.push({ kind: 'deleted', target: change.path, backup });
      }
    }
  } catch (error) {
    await undo();
    const undone = rollbackFailures.length
      ? `; undoing the changes made so far failed too: ${rollbackFailures.join('; ')}`
      : '; no file was changed';
    throw new FileChangesFailed(`${(error as Error).message}${undone}`, rollbackFailures);
  }
  for (const step of done) {
    if (step.kind !== 'added') await ops.unlink(step.backup).catch(ignoreMissing);
  }
}

/** The directories `mkdir -p` made: from `first` (the topmost created) down to `last`. */
function directoriesBetween(first: string, last: string): string[] {
  const dirs = [first];
  const rest = path.relative(first, last);
  if (rest === '') return dirs;
  let current = first;
  for (const part of rest.split(path.sep)) {
    current = path.join(current, part);
    dirs.push(current);
  }
  return dirs;
}

function ignoreMissing(error: NodeJS.ErrnoException): void {
  if (error.code !== 'ENOENT') throw error;
}
