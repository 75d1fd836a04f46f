import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { z } from 'zod';
import { toolErrorFromFs } from './fs-errors';
import { defineTool, textResult } from '../tool';
import { ToolError } from '../tool-error';

/** Entries shown at most; the rest are only counted, so the model knows to look deeper instead. */
const MAX_ENTRIES = 1_000;

export const listDirectoryTool = defineTool({
  name: 'list_directory',
  label: 'List directory',
  description: `List the entries of a workspace directory, sorted, ${MAX_ENTRIES} at most. Directories end with "/", symbolic links with "@".`,
  parameters: z.object({
    path: z
      .string()
      .default('.')
      .describe('Directory path, relative to the workspace root (default: the root)'),
  }),
  category: 'files',
  idempotent: true,
  local: true,
  risk: 'low',
  async execute(_toolCallId, params, _signal, _onUpdate, { workspace }) {
    return workspace.at(params.path, {}, async ({ dir, names, shown }) => {
      const [name, ...rest] = names;
      if (rest.length > 0) throw toolErrorFromFs(Object.assign(new Error(), { code: 'ENOENT' }), shown);
      let entries: Dirent[];
      if (name === undefined) entries = await readdir(dir.self(), { withFileTypes: true });
      else {
        const inner = await dir.child(name).catch((error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOTDIR' || error.code === 'ELOOP')
            throw new ToolError('InvalidArgs', `not a directory: ${shown}`);
          throw toolErrorFromFs(error, shown);
        });
        try {
          entries = await readdir(inner.self(), { withFileTypes: true });
        } catch (error) {
          throw toolErrorFromFs(error, shown);
        } finally {
          await inner.close();
        }
      }
      const listing = entries
        .map((entry) => entry.name + (entry.isDirectory() ? '/' : entry.isSymbolicLink() ? '@' : ''))
        .sort();
      const listed = listing.slice(0, MAX_ENTRIES);
      const more = listing.length - listed.length;
      const text =
        (listed.length ? listed.join('\n') : '(empty directory)') +
        (more ? `\n[${more} more entries not shown]` : '');
      return textResult(text, { path: shown, entries: listing.length });
    });
  },
});
