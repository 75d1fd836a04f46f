import { readFile, stat } from 'node:fs/promises';
import fastGlob from 'fast-glob';
import { z } from 'zod';
import { IGNORED_DIRECTORIES, assertContainedPattern } from './glob';
import { defineTool, textResult } from './tool';
import { ToolError } from './tool-error';

const MAX_FILE_BYTES = 5 * 1024 * 1024;
const MAX_LINE_CHARS = 300;

export const grepTool = defineTool({
  name: 'grep',
  label: 'Search file contents',
  description:
    'Search workspace files for lines matching a regular expression. Returns "path:line: text" for each match. node_modules, .git and binary files are skipped.',
  parameters: z.object({
    pattern: z.string().min(1).describe('JavaScript regular expression'),
    path: z
      .string()
      .default('.')
      .describe('File or directory to search, relative to the workspace root (default: the root)'),
    glob: z.string().optional().describe('Only search files matching this glob, e.g. "**/*.ts"'),
    ignore_case: z.boolean().default(false).describe('Match case-insensitively'),
    max_results: z
      .number()
      .int()
      .min(1)
      .max(1_000)
      .default(100)
      .describe('Stop after this many matches (default 100)'),
  }),
  // Spaces in a regular expression are part of what it matches.
  verbatimParameters: ['pattern'],
  category: 'search',
  idempotent: true,
  risk: 'low',
  async execute(_toolCallId, params, signal, onUpdate, { workspace }) {
    let regex: RegExp;
    try {
      regex = new RegExp(params.pattern, params.ignore_case ? 'i' : '');
    } catch (error) {
      throw new ToolError('InvalidArgs', `invalid regular expression: ${(error as Error).message}`);
    }
    if (params.glob) assertContainedPattern(params.glob);
    const base = await workspace.resolve(params.path);
    const isFile = await stat(base).then(
      (info) => info.isFile(),
      () => {
        throw new ToolError('FileNotFound', `no such file or directory: ${params.path}`);
      },
    );
    const files = isFile
      ? [base]
      : (
          await fastGlob(params.glob ?? '**/*', {
            cwd: base,
            absolute: true,
            dot: true,
            onlyFiles: true,
            followSymbolicLinks: false,
            ignore: IGNORED_DIRECTORIES,
            suppressErrors: true,
          })
        ).sort();

    const matches: string[] = [];
    let scanned = 0;
    for (const file of files) {
      if (signal.aborted || matches.length >= params.max_results) break;
      scanned++;
      if (scanned % 500 === 0) onUpdate({ details: { scanned, of: files.length, matches: matches.length } });
      // A symlinked file may point outside the workspace; only read what really lies inside.
      const real = await workspace.resolve(file).catch(() => undefined);
      if (!real) continue;
      const info = await stat(real).catch(() => undefined);
      if (!info?.isFile() || info.size > MAX_FILE_BYTES) continue;
      const bytes = await readFile(real).catch(() => undefined);
      if (!bytes || bytes.subarray(0, 8_192).includes(0)) continue;
      const lines = bytes.toString('utf8').split('\n');
      for (let index = 0; index < lines.length && matches.length < params.max_results; index++) {
        const line = lines[index]!;
        if (regex.test(line))
          matches.push(`${workspace.relative(file)}:${index + 1}: ${line.slice(0, MAX_LINE_CHARS)}`);
      }
    }
    const limited =
      matches.length >= params.max_results ? `\n[stopped at ${params.max_results} matches]` : '';
    return textResult(matches.length ? matches.join('\n') + limited : 'No matches.', {
      matches: matches.length,
      filesScanned: scanned,
    });
  },
});
