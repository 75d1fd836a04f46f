import { z } from 'zod';

const base = { seq: z.number().int(), at: z.number(), run: z.number().int() };

/** The event log of a conversation, snake_case as in pi-mono's agent loop. `at` is workflow time in ms. */
export const AgentEventSchema = z.discriminatedUnion('type', [
  z.object({ ...base, type: z.literal('run_started'), messageIds: z.array(z.string()) }),
  z.object({
    ...base,
    type: z.literal('model_response'),
    iteration: z.number().int(),
    /** The start of the model's text (EVENT_TEXT_PREVIEW_CHARS); the transcript has all of it. */
    text: z.string(),
    toolCalls: z.array(z.object({ id: z.string(), name: z.string() })),
  }),
  z.object({
    ...base,
    type: z.literal('tool_execution_start'),
    toolCallId: z.string(),
    toolName: z.string(),
    args: z.string(),
  }),
  z.object({
    ...base,
    type: z.literal('tool_execution_end'),
    toolCallId: z.string(),
    toolName: z.string(),
    isError: z.boolean(),
    /** First part of the result text, for display. */
    preview: z.string(),
  }),
  z.object({
    ...base,
    type: z.literal('run_finished'),
    messageIds: z.array(z.string()),
    outcome: z.enum(['answered', 'max_tool_iterations', 'error']),
    answer: z.string(),
  }),
  z.object({ ...base, type: z.literal('error'), message: z.string() }),
]);
export type AgentEvent = z.infer<typeof AgentEventSchema>;
export type AgentEventType = AgentEvent['type'];

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event before the log stamps it with its sequence number, time and run. */
export type NewAgentEvent = DistributiveOmit<AgentEvent, 'seq' | 'at' | 'run'>;
