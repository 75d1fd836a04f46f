import fastGlob from 'fast-glob';
import { z } from 'zod';
import { toolErrorFromFs } from './fs-errors';
import { defineTool, textResult } from './tool';
import { ToolError } from './tool-error';

const MAX_MATCHES = 1_000;
export const IGNORED_DIRECTORIES = ['**/node_modules/**', '**/.git/**'];

/** Globs may only look down from where they start: no absolute patterns, no `..`. */
export function assertContainedPattern(pattern: string): void {
  if (pattern.startsWith('/') || pattern.split('/').includes('..') || pattern.includes('\0')) {
    throw new ToolError('InvalidPath', `pattern must be relative and stay inside the workspace: ${pattern}`);
  }
}

export const globTool = defineTool({
  name: 'glob',
  label: 'Find files',
  description:
    'Find workspace files whose paths match a glob pattern such as "src/**/*.ts". node_modules and .git are skipped.',
  parameters: z.object({
    pattern: z.string().min(1).describe('Glob pattern, relative to path'),
    path: z
      .string()
      .default('.')
      .describe('Directory to search from, relative to the workspace root (default: the root)'),
  }),
  category: 'search',
  idempotent: true,
  risk: 'low',
  async execute(_toolCallId, params, _signal, _onUpdate, { workspace }) {
    assertContainedPattern(params.pattern);
    const base = await workspace.resolve(params.path);
    let matches: string[];
    try {
      matches = await fastGlob(params.pattern, {
        cwd: base,
        absolute: true,
        dot: true,
        followSymbolicLinks: false,
        ignore: IGNORED_DIRECTORIES,
        suppressErrors: true,
      });
    } catch (error) {
      throw toolErrorFromFs(error, workspace.relative(base));
    }
    // fast-glob follows a symlinked directory named in the pattern; keep only what really lies inside.
    const inside = await Promise.all(
      matches.map((match) =>
        workspace.resolve(match).then(
          () => match,
          () => undefined,
        ),
      ),
    );
    const relative = inside.flatMap((match) => (match ? [workspace.relative(match)] : [])).sort();
    const listed = relative.slice(0, MAX_MATCHES);
    const more = relative.length - listed.length;
    const text =
      (listed.length ? listed.join('\n') : 'No files matched.') +
      (more ? `\n[${more} more matches not shown]` : '');
    return textResult(text, { matches: relative.length });
  },
});
