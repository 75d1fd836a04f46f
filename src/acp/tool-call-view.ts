import { oneLine } from '../shared/one-line';
import path from 'node:path';
import type { ToolCallContent, ToolCallLocation, ToolKind } from '@agentclientprotocol/sdk';
import { type FilePatch, parseUnifiedDiff } from '../tools/builtin/unified-diff';
import { type StoredToolOutcome, type ToolOutcomeFields, outcomeFieldsOf } from '../shared/tool-outcome';

/** How an editor shows one tool call: a title a person understands, its kind, the files it touches. */
export interface ToolCallView {
  title: string;
  kind: ToolKind;
  locations: ToolCallLocation[];
  /** The change as diffs, for tools that change files; computed from the arguments alone. */
  diffs: Array<Extract<ToolCallContent, { type: 'diff' }>>;
}

/**
 * The view of a call of `toolName` with `args`, paths made absolute against the session's workspace
 * `cwd`. `currentText` is what a file written whole held before, when known.
 */
export function toolCallView(
  toolName: string,
  args: Record<string, unknown>,
  cwd: string,
  currentText?: string | null,
): ToolCallView {
  const text = (key: string) => (typeof args[key] === 'string' ? (args[key] as string) : undefined);
  const at = (relative: string | undefined) => path.resolve(cwd, relative ?? '.');
  const file = text('path');
  switch (toolName) {
    case 'read':
      return {
        title: `Read ${file ?? 'a file'}`,
        kind: 'read',
        locations: [{ path: at(file), ...(typeof args.offset === 'number' ? { line: args.offset } : {}) }],
        diffs: [],
      };
    case 'write':
      return {
        title: `Write ${file ?? 'a file'}`,
        kind: 'edit',
        locations: [{ path: at(file) }],
        diffs:
          file && text('content') !== undefined
            ? [{ type: 'diff', path: at(file), oldText: currentText ?? null, newText: text('content')! }]
            : [],
      };
    case 'edit':
      return {
        title: `Edit ${file ?? 'a file'}`,
        kind: 'edit',
        locations: [{ path: at(file) }],
        diffs:
          file && text('old_string') !== undefined && text('new_string') !== undefined
            ? [{ type: 'diff', path: at(file), oldText: text('old_string')!, newText: text('new_string')! }]
            : [],
      };
    case 'apply_patch':
      return patchView(text('patch') ?? '', at);
    case 'list_directory':
      return { title: `List ${file ?? '.'}`, kind: 'search', locations: [{ path: at(file) }], diffs: [] };
    case 'grep':
      return {
        title: `Search for ${oneLine(text('pattern') ?? '', 60)}${file ? ` in ${file}` : ''}`,
        kind: 'search',
        locations: file ? [{ path: at(file) }] : [],
        diffs: [],
      };
    case 'glob':
      return {
        title: `Find ${oneLine(text('pattern') ?? '', 60)}`,
        kind: 'search',
        locations: [],
        diffs: [],
      };
    case 'exec':
      return {
        title: `Run ${oneLine(text('command') ?? '', 80)}`,
        kind: 'execute',
        locations: [],
        diffs: [],
      };
    case 'process':
      return {
        title: `${text('action') ?? 'Manage'} background process ${text('id') ?? ''}`.trim(),
        kind: 'execute',
        locations: [],
        diffs: [],
      };
    case 'web_fetch':
    case 'http_get':
      return { title: `Fetch ${oneLine(text('url') ?? '', 80)}`, kind: 'fetch', locations: [], diffs: [] };
    default:
      return { title: toolName, kind: 'other', locations: [], diffs: [] };
  }
}

/** How an editor shows a call that ended: completed, or failed, with the outcome's fields for its raw output. */
export interface ToolCallEnd {
  status: 'completed' | 'failed';
  /** The outcome's status, error kind, blocker (when known): for an editor that tells them apart. */
  fields: ToolOutcomeFields;
}

/**
 * The end of a call from its outcome (a result message or a `tool_execution_end` event), read by
 * its fields: only a result the tool gave completes it; an error, a refusal or an interruption
 * (partial output included) fails it.
 */
export function toolCallEnd(outcome: StoredToolOutcome): ToolCallEnd {
  const fields = outcomeFieldsOf(outcome);
  return { status: fields.status === 'ok' ? 'completed' : 'failed', fields };
}

/** Each file of a unified diff as the old and new text of its hunks (context included). */
function patchView(patch: string, at: (relative: string) => string): ToolCallView {
  let files: FilePatch[] = [];
  try {
    files = parseUnifiedDiff(patch);
  } catch {
    // The tool says what is wrong with the patch; the view just shows no diff.
  }
  const diffs = files.map((file): Extract<ToolCallContent, { type: 'diff' }> => {
    const side = (kinds: string[]) =>
      file.hunks
        .map((hunk) => hunk.lines.filter((line) => kinds.includes(line.kind)).map((line) => `${line.text}\n`))
        .flat()
        .join('');
    return {
      type: 'diff',
      path: at(file.path),
      oldText: file.kind === 'add' ? null : side([' ', '-']),
      newText: file.kind === 'delete' ? '' : side([' ', '+']),
    };
  });
  const names = files.map((file) => file.path);
  return {
    title: names.length ? `Patch ${names.join(', ')}` : 'Apply a patch',
    kind: files.length && files.every((file) => file.kind === 'delete') ? 'delete' : 'edit',
    locations: names.map((name) => ({ path: at(name) })),
    diffs,
  };
}
