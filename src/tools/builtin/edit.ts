import { z } from 'zod';
import { fileAt, readRegularText, writeRegularFile } from './safe-file';
import { defineTool, textResult } from '../tool';
import { ToolError } from '../tool-error';

/** Files are edited in memory; larger ones are refused before they are read. */
export const MAX_EDIT_BYTES = 10 * 1024 * 1024;

export const editTool = defineTool({
  name: 'edit',
  label: 'Edit file',
  description:
    'Replace one exact occurrence of old_string with new_string in a workspace file. old_string must match exactly once; include surrounding lines to make it unique. Files up to 10 MB.',
  parameters: z.object({
    path: z.string().min(1).describe('File path, relative to the workspace root'),
    old_string: z.string().min(1).describe('The exact text to replace'),
    new_string: z.string().describe('The replacement text'),
  }),
  verbatimParameters: ['old_string', 'new_string'],
  category: 'files',
  idempotent: false,
  risk: 'medium',
  async execute(_toolCallId, params, _signal, _onUpdate, { workspace }) {
    // Read and written through the same open directory: the file edited is the file read.
    return workspace.at(params.path, {}, async (reached) => {
      const file = fileAt(reached);
      const { shown } = file;
      const text = await readRegularText(file, {
        maxBytes: MAX_EDIT_BYTES,
        advice: 'Change it with exec (e.g. sed) or rewrite it in parts.',
      });
      const first = text.indexOf(params.old_string);
      if (first === -1) throw new ToolError('InvalidArgs', `old_string was not found in ${shown}`);
      const matches = countOccurrences(text, params.old_string);
      if (matches > 1) {
        throw new ToolError(
          'InvalidArgs',
          `old_string matches ${matches} times in ${shown}; add surrounding context so it matches once`,
        );
      }
      const updated = text.slice(0, first) + params.new_string + text.slice(first + params.old_string.length);
      await writeRegularFile(file, updated);
      const line = text.slice(0, first).split('\n').length;
      return textResult(`Edited ${shown} at line ${line}`, { path: shown, line });
    });
  },
});

/** Overlapping occurrences count too: "aa" occurs twice in "aaa", so it does not name one place. */
function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) count++;
  return count;
}
