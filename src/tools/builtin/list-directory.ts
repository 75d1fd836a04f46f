import { readdir } from 'node:fs/promises';
import { z } from 'zod';
import { toolErrorFromFs } from './fs-errors';
import { defineTool, textResult } from '../tool';

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
  risk: 'low',
  async execute(_toolCallId, params, _signal, _onUpdate, { workspace }) {
    const { absolute: directory, shown } = await workspace.locate(params.path);
    try {
      const entries = await readdir(directory, { withFileTypes: true });
      const names = entries
        .map((entry) => entry.name + (entry.isDirectory() ? '/' : entry.isSymbolicLink() ? '@' : ''))
        .sort();
      const listed = names.slice(0, MAX_ENTRIES);
      const more = names.length - listed.length;
      const text =
        (listed.length ? listed.join('\n') : '(empty directory)') +
        (more ? `\n[${more} more entries not shown]` : '');
      return textResult(text, { path: shown, entries: names.length });
    } catch (error) {
      throw toolErrorFromFs(error, shown);
    }
  },
});
