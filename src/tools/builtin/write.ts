import { z } from 'zod';
import { fileAt, writeRegularFile } from './safe-file';
import { defineTool, textResult } from '../tool';

export const writeTool = defineTool({
  name: 'write',
  label: 'Write file',
  description:
    'Create or overwrite a file in the workspace with the given content. Parent directories are created.',
  parameters: z.object({
    path: z.string().min(1).describe('File path, relative to the workspace root'),
    content: z.string().describe('The complete new content of the file'),
  }),
  verbatimParameters: ['content'],
  category: 'files',
  idempotent: false,
  risk: 'medium',
  async execute(_toolCallId, params, _signal, _onUpdate, { workspace }) {
    // Missing parent directories are made on the way, each inside the one before.
    const shown = await workspace.at(params.path, { create: true }, async (reached) => {
      const file = fileAt(reached);
      await writeRegularFile(file, params.content);
      return file.shown;
    });
    const bytes = Buffer.byteLength(params.content);
    return textResult(`Wrote ${bytes} bytes to ${shown}`, { path: shown, bytes });
  },
});
