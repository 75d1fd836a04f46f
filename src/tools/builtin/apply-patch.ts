import { lstat } from 'node:fs/promises';
import { z } from 'zod';
import {
  type FileChange,
  FileChangesFailed,
  type FileOps,
  type FileTarget,
  commitFileChanges,
} from './atomic-file-changes';
import { MAX_EDIT_BYTES } from './edit';
import type { HeldDirectory } from '../held-directory';
import { applyHunks } from './patch-hunks';
import { fileAt, readRegularText } from './safe-file';
import { defineTool, textResult } from '../tool';
import { ToolError } from '../tool-error';
import { type FilePatch, PatchError, parseUnifiedDiff } from './unified-diff';
import type { Workspace } from '../workspace';

interface PlannedFile {
  shown: string;
  change: FileChange;
  added: number;
  removed: number;
}

/**
 * `apply_patch`: a multi-file unified diff applied all or nothing. Every path is checked against
 * the workspace and every hunk against the file's current content before anything is written;
 * then the files change together (atomic-file-changes.ts) or, on any failure, not at all.
 */
export function createApplyPatchTool(ops?: FileOps) {
  return defineTool({
    name: 'apply_patch',
    label: 'Apply patch',
    description:
      'Apply a unified diff (as `diff -u` or `git diff` write it) to workspace files: several files at once, each added (--- /dev/null), deleted (+++ /dev/null) or changed by @@ hunks with context lines. Either every file changes or none does: if any hunk does not match, nothing is written and the error says which. Hunk line counts must be right; hunks may sit at other line numbers than stated, context must match exactly.',
    parameters: z.object({
      patch: z.string().min(1).describe('The unified diff text'),
    }),
    verbatimParameters: ['patch'],
    category: 'files',
    idempotent: false,
    risk: 'medium',
    async execute(_toolCallId, params, signal, _onUpdate, { workspace }) {
      let patches: FilePatch[];
      try {
        patches = parseUnifiedDiff(params.patch);
      } catch (error) {
        if (error instanceof PatchError)
          throw new ToolError('InvalidArgs', `the patch cannot be read: ${error.message}`);
        throw error;
      }
      // Every directory the patch reaches stays open until the files have changed.
      const held: HeldDirectory[] = [];
      let planned: PlannedFile[];
      try {
        planned = await plan(patches, workspace, held).catch((error: unknown) => {
          if (error instanceof ToolError)
            throw new ToolError(error.kind, `${error.message}; no file was changed`);
          throw error;
        });
        if (signal.aborted) throw signal.reason ?? new Error('aborted');
        await commitFileChanges(
          planned.map((file) => file.change),
          ops,
        );
      } catch (error) {
        if (error instanceof FileChangesFailed) throw new ToolError('ExecutionFailed', error.message);
        throw error;
      } finally {
        for (const dir of held) await dir.close();
      }
      const summary = planned.map(({ shown, change, added, removed }) => {
        const letter = change.kind === 'add' ? 'A' : change.kind === 'delete' ? 'D' : 'M';
        return `${letter} ${shown} (+${added} -${removed})`;
      });
      return textResult(`Applied the patch to ${planned.length} file(s):\n${summary.join('\n')}`, {
        files: planned.map(({ shown, change, added, removed }) => ({
          path: shown,
          change: change.kind,
          added,
          removed,
        })),
      });
    },
  });
}

export const applyPatchTool = createApplyPatchTool();

/** Every file's new content, computed from what is on disk now; throws before anything is written. */
async function plan(
  patches: FilePatch[],
  workspace: Workspace,
  held: HeldDirectory[],
): Promise<PlannedFile[]> {
  const planned: PlannedFile[] = [];
  const seen = new Set<string>();
  for (const patch of patches) {
    const reached = await workspace.reach(patch.path, {});
    held.push(reached.dir);
    const { shown } = reached;
    if (seen.has(reached.absolute))
      throw new ToolError('InvalidArgs', `the patch changes ${shown} more than once`);
    seen.add(reached.absolute);
    const name = reached.names.at(-1);
    if (name === undefined) fileAt(reached);
    const target: FileTarget = { dir: reached.dir, parents: reached.names.slice(0, -1), name: name!, shown };
    const added = patch.hunks.reduce(
      (sum, hunk) => sum + hunk.lines.filter((line) => line.kind === '+').length,
      0,
    );
    const removed = patch.hunks.reduce(
      (sum, hunk) => sum + hunk.lines.filter((line) => line.kind === '-').length,
      0,
    );
    const fit = (original: string) => {
      try {
        return applyHunks(original, patch.hunks, shown);
      } catch (error) {
        if (error instanceof PatchError) throw new ToolError('InvalidArgs', error.message);
        throw error;
      }
    };
    if (patch.kind === 'add') {
      if (target.parents.length === 0 && (await exists(reached.dir.entry(target.name))))
        throw new ToolError('InvalidArgs', `${shown} already exists`);
      planned.push({ shown, change: { kind: 'add', target, content: fit('') }, added, removed });
      continue;
    }
    const original = await readRegularText(fileAt(reached), {
      maxBytes: MAX_EDIT_BYTES,
      advice: 'Change it with exec (e.g. sed) instead, in its own step.',
    });
    if (patch.kind === 'delete') {
      if (patch.hunks.length > 0 && fit(original) !== '') {
        throw new ToolError('InvalidArgs', `${shown} holds more than the patch deletes`);
      }
      planned.push({ shown, change: { kind: 'delete', target, expected: original }, added, removed });
    } else {
      planned.push({
        shown,
        change: { kind: 'update', target, content: fit(original), expected: original },
        added,
        removed,
      });
    }
  }
  return planned;
}

async function exists(entry: string): Promise<boolean> {
  return lstat(entry).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return false;
      throw error;
    },
  );
}
