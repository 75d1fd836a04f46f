import { oneLine } from './one-line';

/**
 * One-line summaries shown for activities in the Temporal Web UI and `temporal workflow describe`,
 * instead of the bare activity type (`runTool`, `callModel`): `exec: npm test`, `read src/app.ts`,
 * `model gpt-4o-mini: run 2, turn 3`. They are metadata: changing them never breaks a replay.
 */

const MAX_SUMMARY_CHARS = 120;

/** The argument that says most about a call, in the order tried. */
const TELLING_ARGUMENTS = [
  'command',
  'path',
  'pattern',
  'url',
  'query',
  'id',
  'sessionId',
  'task',
  'message',
];

export function toolCallSummary(toolName: string, args: Record<string, unknown>): string {
  const key = TELLING_ARGUMENTS.find((name) => typeof args[name] === 'string' && args[name] !== '');
  const fallback = Object.values(args).find((value) => typeof value === 'string' && value !== '');
  const value = (key ? args[key] : fallback) as string | undefined;
  if (value === undefined) return toolName;
  const separator = key === 'command' || key === undefined ? ': ' : ' ';
  return oneLine(`${toolName}${separator}${value}`, MAX_SUMMARY_CHARS);
}

export function modelCallSummary(model: string | undefined, run: number, turn: number): string {
  return `model ${model ?? '(worker default)'}: run ${run}, turn ${turn}`;
}

/** A conversation's static summary in the Web UI: the message it was started with. */
export function conversationSummary(firstMessage: string): string {
  return oneLine(firstMessage, 200);
}
