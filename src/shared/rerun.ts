import { z } from 'zod';
import { ToolResultContentSchema } from './content';
import { ToolOutcomeFieldsSchema } from './tool-outcome';

/**
 * What a rerun does with a tool call: `recorded` answers it with the original's result when the
 * original made the same call (name and arguments) in the same run, else "not recorded"; `live`
 * runs the calls the recording lacks; `ask` runs them only once a person allows each one.
 */
export const RerunToolsSchema = z.enum(['recorded', 'live', 'ask']);
export type RerunTools = z.infer<typeof RerunToolsSchema>;

/** One tool call of the original with the result the model read. */
export const RecordedToolCallSchema = z.strictObject({
  /** The original's run the call was made in. */
  run: z.number().int().min(1),
  /** The tool's name. */
  toolName: z.string(),
  /** The arguments, canonical (see canonicalArguments), so a call matches whatever its key order. */
  arguments: z.string(),
  /** The result the model read. */
  content: z.array(ToolResultContentSchema).min(1),
  /** Whether the model read it as an error. */
  isError: z.boolean(),
  ...ToolOutcomeFieldsSchema.partial().shape,
});
export type RecordedToolCall = z.infer<typeof RecordedToolCallSchema>;

/**
 * A conversation that runs another's user messages again (`rerun`). The recorded results are what
 * the client read from the original's history: text for the model, like a message; they run
 * nothing and grant nothing, so a worker holds them to no floor.
 */
export const RerunSchema = z.strictObject({
  /** The original conversation's id, for readers. */
  of: z.string(),
  /** What to do with tool calls: `recorded`, `live` or `ask`. */
  tools: RerunToolsSchema,
  /** The original's tool calls and their results. */
  recorded: z.array(RecordedToolCallSchema),
});
export type Rerun = z.infer<typeof RerunSchema>;

/**
 * A call's arguments as one text whatever the order of their keys; the model's text as it is when
 * it is not a JSON object. Pure, for workflow code.
 */
export function canonicalArguments(raw: string): string {
  let value: unknown;
  try {
    value = JSON.parse(raw.trim() === '' ? '{}' : raw);
  } catch {
    return raw;
  }
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
  );
}
