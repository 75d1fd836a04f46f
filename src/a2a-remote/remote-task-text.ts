import { MAX_TOOL_RESULT_BYTES } from '../shared/constants';
import { inertLine, inertText } from './inert-text';
import type { RemotePart, RemoteTask } from './remote-task';

/** The most of one data part's JSON shown. */
const MAX_DATA_PART_BYTES = 16_384;

/**
 * What a remote's parts say, as text: text parts as they are, data parts as JSON, files named (never
 * fetched, never decoded). Stripped of control characters and escape sequences and cut at
 * `maxBytes`: a remote's words are data for the model and the terminal, never markup or commands.
 */
export function textOfParts(parts: readonly RemotePart[], maxBytes = MAX_TOOL_RESULT_BYTES): string {
  const pieces = parts.map((part) => {
    if (part.text !== undefined) return part.text;
    if (part.data !== undefined)
      return inertText(JSON.stringify(part.data, null, 2) ?? 'null', MAX_DATA_PART_BYTES);
    const name = inertLine(part.filename || 'unnamed', 200);
    const type = part.mediaType ? ` (${inertLine(part.mediaType, 100)})` : '';
    if (part.url !== undefined) return `[file ${name}${type} at ${inertLine(part.url, 500)}]`;
    return `[file ${name}${type}, not shown]`;
  });
  return inertText(pieces.join('\n'), maxBytes);
}

/** The answer of a completed task: its artifacts' parts, or its status message when it has none. */
export function answerOfTask(task: RemoteTask, maxBytes = MAX_TOOL_RESULT_BYTES): string {
  const artifactParts = (task.artifacts ?? []).flatMap((artifact) => artifact.parts);
  return textOfParts(artifactParts.length ? artifactParts : (task.status.message?.parts ?? []), maxBytes);
}

/** What the task's status message says (why it failed, what it asks), or an empty string. */
export function statusText(task: RemoteTask, maxBytes = 8_192): string {
  return textOfParts(task.status.message?.parts ?? [], maxBytes);
}
