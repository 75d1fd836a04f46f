import { z } from 'zod';
import { fileAt, readRegularFile } from './safe-file';
import { defineTool, textResult } from '../tool';
import { ToolError } from '../tool-error';

const DEFAULT_LINES = 2_000;
const MAX_FILE_BYTES = 50 * 1024 * 1024;

export const readTool = defineTool({
  name: 'read',
  label: 'Read file',
  description: `Read a text file in the workspace. Returns up to ${DEFAULT_LINES} lines; use offset and limit to page through longer files.`,
  parameters: z.object({
    path: z.string().min(1).describe('File path, relative to the workspace root'),
    offset: z.number().int().min(1).optional().describe('First line to return, 1-based (default 1)'),
    limit: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(`Number of lines to return (default ${DEFAULT_LINES})`),
  }),
  category: 'files',
  idempotent: true,
  local: true,
  risk: 'low',
  async execute(_toolCallId, params, _signal, _onUpdate, { workspace }) {
    const { bytes, shown } = await workspace.at(params.path, {}, async (reached) => {
      const file = fileAt(reached);
      const read = await readRegularFile(file, {
        maxBytes: MAX_FILE_BYTES,
        advice: 'Use grep to find the lines you need.',
      });
      return { bytes: read, shown: file.shown };
    });
    if (bytes.subarray(0, 8_192).includes(0)) throw new ToolError('InvalidArgs', `${shown} is a binary file`);
    const lines = bytes.toString('utf8').split('\n');
    const start = (params.offset ?? 1) - 1;
    if (start >= lines.length && lines.length > 0 && start > 0) {
      throw new ToolError(
        'InvalidArgs',
        `offset ${params.offset} is past the end of ${shown} (${lines.length} lines)`,
      );
    }
    const end = Math.min(lines.length, start + (params.limit ?? DEFAULT_LINES));
    let text = lines.slice(start, end).join('\n');
    if (end < lines.length)
      text += `\n\n[Lines ${start + 1}-${end} of ${lines.length}. Use offset=${end + 1} to continue.]`;
    return textResult(text, { path: shown, startLine: start + 1, endLine: end, totalLines: lines.length });
  },
});
