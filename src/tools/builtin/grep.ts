import { lstat } from 'node:fs/promises';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import { z } from 'zod';
import { assertContainedPattern } from './glob';
import { compileLinearRegex } from './linear-regex';
import { fileAt, readRegularFile } from './safe-file';
import { defineTool, textResult } from '../tool';
import { ToolError } from '../tool-error';
import type { Reached } from '../workspace';
import { findFiles } from './workspace-tree';

/** Larger files are skipped. */
const MAX_FILE_BYTES = 5 * 1024 * 1024;
/** Characters of a matching line shown. */
const MAX_SHOWN_LINE_CHARS = 300;
/** Files searched in one call; the rest are left, and the answer says so. */
const MAX_FILES = 20_000;
/** Bytes read in one call, over all files. */
const MAX_BYTES_SCANNED = 256 * 1024 * 1024;
/**
 * Program size times line length, for one line: matching one line is one synchronous call, so a
 * line the pattern would take longer than this on is skipped (and counted) rather than matched.
 */
const MAX_LINE_WORK = 1_000_000;
const MAX_LINE_CHARS = 1_000_000;
/** Wall-clock time one call may search for before it answers with what it found. */
const MAX_SEARCH_MS = 30_000;
/** The longest stretch of matching between two turns of the event loop. */
const SLICE_MS = 20;

export const grepTool = defineTool({
  name: 'grep',
  label: 'Search file contents',
  description:
    'Search workspace files for lines matching a regular expression (RE2 syntax; no backreferences or lookaround). Returns "path:line: text" for each match. node_modules, .git and binary files are skipped.',
  parameters: z.object({
    pattern: z
      .string()
      .min(1)
      .describe('Regular expression, RE2 syntax (as in Go or ripgrep; no backreferences or lookaround)'),
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
    const regex = compileLinearRegex(params.pattern, params.ignore_case);
    if (params.glob) assertContainedPattern(params.glob);
    const maxLineChars = Math.min(MAX_LINE_CHARS, Math.floor(MAX_LINE_WORK / regex.instructions));
    const started = performance.now();
    const { files, more, single } = await workspace.at(params.path, {}, (reached) =>
      filesUnder(reached, params.glob, params.path),
    );

    const matches: string[] = [];
    let scanned = 0;
    let bytesScanned = 0;
    let longLines = 0;
    let stopped = '';
    let sliceStart = performance.now();
    // The loop turns between files and after every SLICE_MS of matching (checked line by line:
    // one line may take milliseconds), so heartbeats and other conversations go on.
    const pause = async () => {
      await yieldToEventLoop();
      sliceStart = performance.now();
    };
    const sliceOver = () => performance.now() - sliceStart >= SLICE_MS;
    for (const file of files) {
      if (signal.aborted || matches.length >= params.max_results) break;
      if (performance.now() - started > MAX_SEARCH_MS) {
        stopped = `searching took over ${MAX_SEARCH_MS / 1000} s`;
        break;
      }
      if (bytesScanned > MAX_BYTES_SCANNED) {
        stopped = `${MAX_BYTES_SCANNED} bytes were searched`;
        break;
      }
      if (sliceOver()) await pause();
      scanned++;
      if (scanned % 500 === 0) onUpdate({ details: { scanned, of: files.length, matches: matches.length } });
      // Walked again from the root: whatever the path leads to now, it lies inside the workspace.
      const shown = file;
      const reading = workspace.at(file, {}, (reached) =>
        readRegularFile(fileAt(reached), {
          maxBytes: MAX_FILE_BYTES,
          advice: 'Search it with exec (e.g. rg or grep) instead.',
        }),
      );
      const bytes = single ? await reading : await reading.catch(() => undefined);
      if (!bytes || bytes.subarray(0, 8_192).includes(0)) continue;
      bytesScanned += bytes.length;
      const lines = bytes.toString('utf8').split('\n');
      for (let index = 0; index < lines.length && matches.length < params.max_results; index++) {
        if (sliceOver()) {
          await pause();
          if (signal.aborted) break;
        }
        const line = lines[index]!;
        if (line.length > maxLineChars) {
          longLines++;
          continue;
        }
        if (regex.test(line)) matches.push(`${shown}:${index + 1}: ${line.slice(0, MAX_SHOWN_LINE_CHARS)}`);
      }
    }
    const notes: string[] = [];
    if (matches.length >= params.max_results) notes.push(`[stopped at ${params.max_results} matches]`);
    if (stopped)
      notes.push(`[stopped after ${scanned} files: ${stopped}; narrow path or glob to search the rest]`);
    if (more)
      notes.push(`[only the first ${MAX_FILES} files were searched; narrow path or glob to search the rest]`);
    if (longLines)
      notes.push(
        `[${longLines} lines longer than ${maxLineChars} characters were not searched; a simpler pattern searches longer lines]`,
      );
    const text =
      (matches.length ? matches.join('\n') : 'No matches.') + notes.map((note) => `\n${note}`).join('');
    return textResult(text, { matches: matches.length, filesScanned: scanned });
  },
});

/**
 * The files to search (workspace-relative, sorted); at most MAX_FILES of them, `more` when there
 * were others. `single`: the path names one file, whose failures (a FIFO, too large) the model
 * should hear about.
 */
async function filesUnder(
  reached: Reached,
  glob: string | undefined,
  requested: string,
): Promise<{ files: string[]; more: boolean; single: boolean }> {
  const [name, ...rest] = reached.names;
  const info = name === undefined ? undefined : await lstat(reached.dir.entry(name)).catch(() => undefined);
  if (rest.length > 0 || (name !== undefined && info === undefined))
    throw new ToolError('FileNotFound', `no such file or directory: ${requested}`);
  if (info && !info.isDirectory()) return { files: [reached.shown], more: false, single: true };
  return { ...(await findFiles(reached, glob ?? '**/*', MAX_FILES)), single: false };
}
