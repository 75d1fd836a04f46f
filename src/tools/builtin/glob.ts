import { z } from 'zod';
import { defineTool, textResult } from '../tool';
import { ToolError } from '../tool-error';
import { findFiles } from './workspace-tree';

/** Matches shown; the rest are counted, up to MAX_COUNTED. */
const MAX_MATCHES = 1_000;
const MAX_COUNTED = 100_000;

/** Globs may only look down from where they start: no absolute patterns, no `..`. */
export function assertContainedPattern(pattern: string): void {
  if (pattern.startsWith('/') || pattern.split('/').includes('..') || pattern.includes('\0')) {
    throw new ToolError('InvalidPath', `pattern must be relative and stay inside the workspace: ${pattern}`);
  }
  assertBoundedPattern(pattern);
}

const MAX_PATTERN_CHARS = 256;
const MAX_GLOBSTARS = 2;
const MAX_STARS_PER_SEGMENT = 2;
const MAX_WILDCARDS = 4;
const MAX_BRACE_EXPANSIONS = 64;

/**
 * Globs are matched with backtracking regular expressions (picomatch): each `*` in a path
 * segment and each `**` segment multiplies the ways a long name can be tried, and `*a*a*a*ab`
 * against a 255-character name, or three `**` segments against a deep path, take minutes on the
 * worker's one thread. Braces expand into one pattern per alternative. So the number of wildcards
 * and alternatives is bounded to what everyday patterns (`src/**\/*.ts`, `**\/*.{ts,tsx}`,
 * `**\/test/**\/*foo*`) need; extglobs (`+(a|b)`) are not interpreted at all.
 */
export function assertBoundedPattern(pattern: string): void {
  const refuse = (why: string) => {
    throw new ToolError(
      'InvalidArgs',
      `glob pattern ${why}; use a simpler pattern, or grep with a regular expression`,
    );
  };
  if (pattern.length > MAX_PATTERN_CHARS) refuse(`is longer than ${MAX_PATTERN_CHARS} characters`);
  const segments = pattern.split('/');
  const globstars = new Set(segments.flatMap((segment, index) => (segment === '**' ? [index] : [])));
  // Consecutive `**` segments act as one.
  const distinctGlobstars = [...globstars].filter((index) => !globstars.has(index - 1)).length;
  if (distinctGlobstars > MAX_GLOBSTARS) refuse(`has more than ${MAX_GLOBSTARS} ** segments`);
  let stars = 0;
  for (const segment of segments) {
    if (segment === '**') continue;
    const inSegment = segment.match(/\*+/g)?.length ?? 0;
    if (inSegment > MAX_STARS_PER_SEGMENT)
      refuse(`has more than ${MAX_STARS_PER_SEGMENT} * wildcards in one path segment`);
    stars += inSegment;
  }
  if (stars + distinctGlobstars > MAX_WILDCARDS)
    refuse(`has more than ${MAX_WILDCARDS} * and ** wildcards in all`);
  let expansions = 1;
  for (const group of pattern.match(/\{[^{}]*\}/g) ?? []) {
    if (group.includes('..')) refuse('has a {a..b} range; list the alternatives instead');
    expansions *= group.split(',').length;
  }
  if (/\{[^}]*\{/.test(pattern)) refuse('has nested {…} groups');
  if (expansions > MAX_BRACE_EXPANSIONS) refuse(`expands to more than ${MAX_BRACE_EXPANSIONS} alternatives`);
}

export const globTool = defineTool({
  name: 'glob',
  label: 'Find files',
  description:
    'Find workspace files whose paths match a glob pattern such as "src/**/*.ts". node_modules and .git are skipped; symbolic links are not followed.',
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
    const { files: relative, more: uncounted } = await workspace.at(params.path, {}, (reached) =>
      findFiles(reached, params.pattern, MAX_COUNTED),
    );
    const listed = relative.slice(0, MAX_MATCHES);
    const more = relative.length - listed.length;
    const text =
      (listed.length ? listed.join('\n') : 'No files matched.') +
      (more ? `\n[${more}${uncounted ? ' or more' : ''} more matches not shown]` : '');
    return textResult(text, { matches: relative.length });
  },
});
