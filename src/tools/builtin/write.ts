import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { toolErrorFromFs } from './fs-errors';
import { writeRegularFile } from './safe-file';
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
    const { absolute: file, shown } = await workspace.locate(params.path);
    try {
      await mkdir(path.dirname(file), { recursive: true });
    } catch (error) {
      throw toolErrorFromFs(error, path.dirname(shown));
    }
    await writeRegularFile(file, shown, params.content);
    const bytes = Buffer.byteLength(params.content);
    return textResult(`Wrote ${bytes} bytes to ${shown}`, { path: shown, bytes });
  },
});
