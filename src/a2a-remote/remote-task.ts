import { createHash } from 'node:crypto';
import { z } from 'zod';

const MAX_ID_CHARS = 512;
/** Ids a remote hands out go into heartbeats and the model's text: printable ASCII, bounded. */
const RemoteId = z
  .string()
  .min(1)
  .max(MAX_ID_CHARS)
  .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces');

/** A part as it arrives: text, data, or a file; the rest is ignored. */
const RemotePartSchema = z.object({
  text: z.string().optional(),
  data: z.unknown().optional(),
  url: z.string().optional(),
  raw: z.string().optional(),
  filename: z.string().optional(),
  mediaType: z.string().optional(),
});
export type RemotePart = z.infer<typeof RemotePartSchema>;

const RemoteMessageSchema = z.object({
  messageId: z.string().max(MAX_ID_CHARS).optional(),
  parts: z.array(RemotePartSchema).max(1_000).default([]),
});

/** The states a remote task has, as the wire spells them in A2A 1.0 (0.3's lower-case names read too). */
export type RemoteTaskState =
  | 'submitted'
  | 'working'
  | 'input-required'
  | 'auth-required'
  | 'completed'
  | 'failed'
  | 'canceled'
  | 'rejected'
  | 'unknown';

const STATES: Record<string, RemoteTaskState> = {
  TASK_STATE_SUBMITTED: 'submitted',
  TASK_STATE_WORKING: 'working',
  TASK_STATE_INPUT_REQUIRED: 'input-required',
  TASK_STATE_AUTH_REQUIRED: 'auth-required',
  TASK_STATE_COMPLETED: 'completed',
  TASK_STATE_FAILED: 'failed',
  TASK_STATE_CANCELED: 'canceled',
  TASK_STATE_REJECTED: 'rejected',
};

export const RemoteTaskSchema = z.object({
  id: RemoteId,
  contextId: RemoteId.optional(),
  status: z.object({
    state: z.string().transform((state): RemoteTaskState => STATES[state] ?? stateOf03(state)),
    message: RemoteMessageSchema.optional(),
    timestamp: z.string().max(64).optional(),
  }),
  artifacts: z
    .array(z.object({ name: z.string().optional(), parts: z.array(RemotePartSchema).max(1_000).default([]) }))
    .max(1_000)
    .optional(),
});
export type RemoteTask = z.infer<typeof RemoteTaskSchema>;

/** What SendMessage answers: a task, or a message that is the whole answer. */
export const SendResultSchema = z.union([
  z.object({ task: RemoteTaskSchema }),
  z.object({ message: RemoteMessageSchema }),
]);
export type SendResult = z.infer<typeof SendResultSchema>;

/** States after which the remote task takes nothing more. */
export const FINAL_STATES: ReadonlySet<RemoteTaskState> = new Set([
  'completed',
  'failed',
  'canceled',
  'rejected',
]);
/** States in which the remote task waits for its caller. */
export const WAITING_STATES: ReadonlySet<RemoteTaskState> = new Set(['input-required', 'auth-required']);

/**
 * What tells one status of a task from another: a task that asks again is told from the question
 * this call answers by its state, time and message.
 */
export function statusMark(task: RemoteTask): string {
  const { state, timestamp = '', message } = task.status;
  return createHash('sha256')
    .update(JSON.stringify([state, timestamp, message?.messageId ?? '', message?.parts ?? []]))
    .digest('hex')
    .slice(0, 32);
}

function stateOf03(state: string): RemoteTaskState {
  const known: readonly RemoteTaskState[] = [
    'submitted',
    'working',
    'input-required',
    'auth-required',
    'completed',
    'failed',
    'canceled',
    'rejected',
  ];
  return (known as readonly string[]).includes(state) ? (state as RemoteTaskState) : 'unknown';
}
