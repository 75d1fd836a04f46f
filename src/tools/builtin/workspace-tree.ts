import { lstat, readdir } from 'node:fs/promises';
import picomatch from 'picomatch';
import { ToolError } from '../tool-error';
import { type HeldDirectory, withoutDescriptorPaths } from '../held-directory';
import type { Reached } from '../workspace';

/** Directories never searched, wherever they are. */
const SKIPPED_DIRECTORIES = new Set(['node_modules', '.git']);
/** Directory levels a search goes down at most. */
const MAX_DEPTH = 64;
/** Entries looked at in one search at most, so a huge tree cannot keep a call going. */
const MAX_ENTRIES_VISITED = 500_000;

/** Extglobs stay literal text: patterns come from the model, and they only widen what can backtrack. */
const MATCH_OPTIONS = { dot: true, noextglob: true } as const;
const GLOB_CHARACTERS = /[*?[\]{}()!]/;

export interface FoundFiles {
  /** Workspace-relative paths, sorted. */
  files: string[];
  /** More files matched than `limit`, or the search stopped at its bounds. */
  more: boolean;
}

/**
 * The regular files under the directory `start` reached whose path relative to it matches
 * `pattern` (a glob, `**` for any depth), at most `limit`. Directories are opened one inside the
 * other by descriptor; symbolic links are neither followed nor listed, including in the pattern's
 * literal leading segments; node_modules and .git are skipped.
 */
export async function findFiles(start: Reached, pattern: string, limit: number): Promise<FoundFiles> {
  const base = await directoryAt(start);
  const segments = pattern.split('/').filter((segment) => segment !== '' && segment !== '.');
  const literal: string[] = [];
  while (segments.length > 0 && !GLOB_CHARACTERS.test(segments[0]!)) literal.push(segments.shift()!);
  const shownBase = start.shown === '.' ? [] : [start.shown];
  const opened: HeldDirectory[] = [base];
  try {
    if (literal.some((segment) => SKIPPED_DIRECTORIES.has(segment))) return { files: [], more: false };
    if (segments.length === 0) {
      // No wildcard at all: one file, named outright.
      const name = literal.pop();
      if (name === undefined) return { files: [], more: false };
      const dir = await descend(opened, literal);
      if (!dir) return { files: [], more: false };
      const info = await lstat(dir.entry(name)).catch(() => undefined);
      return { files: info?.isFile() ? [[...shownBase, ...literal, name].join('/')] : [], more: false };
    }
    const dir = await descend(opened, literal);
    if (!dir) return { files: [], more: false };
    const rest = segments.join('/');
    const matches = picomatch(rest, MATCH_OPTIONS);
    const depth = segments.some((segment) => segment.includes('**')) ? MAX_DEPTH : segments.length;
    const prefix = [...shownBase, ...literal];
    const found = await walk(dir, depth, limit, (relative) => matches(relative));
    return {
      files: found.files.map((relative) => [...prefix, relative].join('/')).sort(),
      more: found.more,
    };
  } finally {
    for (const dir of opened) if (dir !== start.dir) await dir.close();
  }
}

/** The directory a walk reached, open; a file or a missing path is an error the model reads. */
export async function directoryAt(reached: Reached): Promise<HeldDirectory> {
  const [name, ...rest] = reached.names;
  if (name === undefined) return reached.dir;
  if (rest.length > 0) throw new ToolError('FileNotFound', `no such file or directory: ${reached.shown}`);
  return reached.dir.child(name).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT')
      throw new ToolError('FileNotFound', `no such file or directory: ${reached.shown}`);
    if (error.code === 'ENOTDIR' || error.code === 'ELOOP')
      throw new ToolError('InvalidArgs', `not a directory: ${reached.shown}`);
    if (error.code === 'EACCES' || error.code === 'EPERM')
      throw new ToolError('PermissionDenied', `permission denied: ${reached.shown}`);
    throw withoutDescriptorPaths(error);
  });
}

/** Goes down `names` from the last of `opened` without following links; undefined when one is not a directory. */
async function descend(
  opened: HeldDirectory[],
  names: readonly string[],
): Promise<HeldDirectory | undefined> {
  for (const name of names) {
    const next = await opened
      .at(-1)!
      .child(name)
      .catch(() => undefined);
    if (!next) return undefined;
    opened.push(next);
  }
  return opened.at(-1)!;
}

/** Files below `top` (paths relative to it) for which `wanted` holds, depth-first, each directory held open while it is read. */
async function walk(
  top: HeldDirectory,
  maxDepth: number,
  limit: number,
  wanted: (relative: string) => boolean,
): Promise<FoundFiles> {
  const files: string[] = [];
  let visited = 0;
  let more = false;
  const visit = async (dir: HeldDirectory, relative: string, depth: number): Promise<void> => {
    const entries = await readdir(dir.self(), { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (more) return;
      if (++visited > MAX_ENTRIES_VISITED) {
        more = true;
        return;
      }
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      if (entry.isFile()) {
        if (!wanted(path)) continue;
        if (files.length >= limit) {
          more = true;
          return;
        }
        files.push(path);
      } else if (entry.isDirectory() && depth < maxDepth && !SKIPPED_DIRECTORIES.has(entry.name)) {
        const child = await dir.child(entry.name).catch(() => undefined);
        if (!child) continue;
        try {
          await visit(child, path, depth + 1);
        } finally {
          await child.close();
        }
      }
    }
  };
  await visit(top, '', 1);
  return { files, more };
}
