import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import * as fs from 'node:fs/promises';
import { type HeldDirectory, withoutDescriptorPaths } from '../held-directory';
import { readRegularFile, readRegularText } from './safe-file';

/** The largest file a commit re-reads to check it is unchanged; callers read nothing larger. */
const MAX_CHECKED_BYTES = 64 * 1024 * 1024;
const CREATE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/**
 * Where a change lands: `name` in the open directory `dir`, below `parents` (directories that do
 * not exist yet, made first, each inside the one before). `shown` names it in messages.
 */
export interface FileTarget {
  dir: HeldDirectory;
  parents: string[];
  name: string;
  shown: string;
}

/** One file's new state: its whole new content, or gone. `expected` is the content the change was computed from. */
export type FileChange =
  | { kind: 'add'; target: FileTarget; content: string }
  | { kind: 'update'; target: FileTarget; content: string; expected: string }
  | { kind: 'delete'; target: FileTarget; expected: string };

/**
 * The file system calls that change files, so tests can make one of them fail. Every path they get
 * names an entry of an open directory (HeldDirectory.entry), and none follows a link at it; new
 * contents are written through a descriptor opened with O_EXCL | O_NOFOLLOW.
 */
export type FileOps = Pick<typeof fs, 'writeFile' | 'rename' | 'link' | 'unlink' | 'mkdir' | 'rmdir'>;

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
  | { kind: 'replaced' | 'deleted'; dir: HeldDirectory; name: string; backup: string }
  | { kind: 'added'; dir: HeldDirectory; name: string };

/**
 * Makes every change or none (targets must be distinct). New contents are first written to
 * temporary files beside their targets and the targets checked to still hold what the changes were
 * computed from; only then are the temporary files renamed into place, each rename atomic, with the
 * old files kept as backups until all succeeded. A failure at any step undoes the steps before it.
 * A process killed half-way leaves the backups (`.<name>.<id>.apply-patch.orig`) behind.
 */
export async function commitFileChanges(changes: FileChange[], ops: FileOps = fs): Promise<void> {
  const id = randomBytes(4).toString('hex');
  const sibling = (name: string, suffix: string) => `.${name}.${id}.apply-patch.${suffix}`;
  /** The directory each change lands in, once its parents are made. */
  const homes = new Map<FileChange, HeldDirectory>();
  const opened: HeldDirectory[] = [];
  const temps = new Map<FileChange, string>();
  const createdDirs: Array<{ dir: HeldDirectory; name: string }> = [];
  const done: Done[] = [];
  const rollbackFailures: string[] = [];
  const attempt = async (what: string, step: () => Promise<unknown>) => {
    try {
      await step();
    } catch (error) {
      rollbackFailures.push(`${what}: ${withoutDescriptorPaths(error as Error).message}`);
    }
  };
  const undo = async () => {
    for (const step of done.reverse()) {
      if (step.kind === 'added')
        await attempt(`removing ${step.name}`, () => ops.unlink(step.dir.entry(step.name)));
      else
        await attempt(`restoring ${step.name} from ${step.backup}`, () =>
          ops.rename(step.dir.entry(step.backup), step.dir.entry(step.name)),
        );
    }
    for (const [change, temp] of temps) {
      const home = homes.get(change)!;
      await attempt(`removing ${temp}`, () => ops.unlink(home.entry(temp)).catch(ignoreMissing));
    }
    for (const { dir, name } of createdDirs.reverse())
      await attempt(`removing ${name}`, () => ops.rmdir(dir.entry(name)));
  };

  try {
    try {
      for (const change of changes) {
        const home = await makeParents(change.target, ops, opened, createdDirs);
        homes.set(change, home);
        if (change.kind === 'delete') continue;
        const temp = sibling(change.target.name, 'tmp');
        const handle = await fs.open(home.entry(temp), CREATE_FLAGS, 0o666);
        temps.set(change, temp);
        try {
          await ops.writeFile(handle, change.content);
          if (change.kind === 'update') {
            const mode = (await fs.lstat(home.entry(change.target.name))).mode & 0o7777;
            await handle.chmod(mode);
          }
        } finally {
          await handle.close();
        }
      }
      for (const change of changes) {
        if (change.kind === 'add') continue;
        const { target } = change;
        const current = await readRegularText(
          { dir: homes.get(change)!, name: target.name, shown: target.shown },
          { maxBytes: MAX_CHECKED_BYTES, advice: 'It grew while the patch was being applied.' },
        );
        if (current !== change.expected)
          throw new Error(`${target.shown} changed while the patch was being applied`);
      }
      for (const change of changes) {
        const home = homes.get(change)!;
        const { name, shown } = change.target;
        const target = home.entry(name);
        if (change.kind === 'add') {
          const temp = home.entry(temps.get(change)!);
          // A link, unlike a rename, refuses to replace a file that appeared meanwhile.
          await ops.link(temp, target);
          done.push({ kind: 'added', dir: home, name });
          await ops.unlink(temp);
          temps.delete(change);
        } else if (change.kind === 'update') {
          const backup = sibling(name, 'orig');
          await ops.link(target, home.entry(backup)).catch(() => copyRegularFile(home, name, backup, shown));
          await ops.rename(home.entry(temps.get(change)!), target).catch(async (error: unknown) => {
            await ops.unlink(home.entry(backup)).catch(ignoreMissing);
            throw error;
          });
          temps.delete(change);
          done.push({ kind: 'replaced', dir: home, name, backup });
        } else {
          const backup = sibling(name, 'orig');
          await ops.rename(target, home.entry(backup));
          done.push({ kind: 'deleted', dir: home, name, backup });
        }
      }
    } catch (error) {
      await undo();
      const undone = rollbackFailures.length
        ? `; undoing the changes made so far failed too: ${rollbackFailures.join('; ')}`
        : '; no file was changed';
      const why = withoutDescriptorPaths(error as Error).message;
      throw new FileChangesFailed(`${why}${undone}`, rollbackFailures);
    }
    for (const step of done) {
      if (step.kind !== 'added') await ops.unlink(step.dir.entry(step.backup)).catch(ignoreMissing);
    }
  } finally {
    for (const dir of opened) await dir.close();
  }
}

/** Makes `target.parents` one inside the other (recording each made), and returns the innermost, open. */
async function makeParents(
  target: FileTarget,
  ops: FileOps,
  opened: HeldDirectory[],
  created: Array<{ dir: HeldDirectory; name: string }>,
): Promise<HeldDirectory> {
  let dir = target.dir;
  for (const name of target.parents) {
    const made = await ops.mkdir(dir.entry(name)).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'EEXIST') return false;
        throw error;
      },
    );
    if (made) created.push({ dir, name });
    // Opened without following a link: one put there meanwhile is refused, not entered.
    dir = await dir.child(name);
    opened.push(dir);
  }
  return dir;
}

/** A backup where the file system has no hard links: the content copied through O_NOFOLLOW descriptors. */
async function copyRegularFile(dir: HeldDirectory, name: string, copy: string, shown: string): Promise<void> {
  const content = await readRegularFile(
    { dir, name, shown },
    { maxBytes: MAX_CHECKED_BYTES, advice: 'It grew while the patch was being applied.' },
  );
  const handle = await fs.open(dir.entry(copy), CREATE_FLAGS, 0o600);
  try {
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
}

function ignoreMissing(error: NodeJS.ErrnoException): void {
  if (error.code !== 'ENOENT') throw error;
}
