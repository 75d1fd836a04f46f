import { z } from 'zod';
import { sessionIdProblem } from '../shared/ids';

/**
 * What an MCP task is: the run that takes one message of one conversation. Its id carries all of
 * it, so any gateway answers for the task without having seen it made; a task id a client sends is
 * its own claim, and every read of the task is checked against the caller's scope.
 */
export interface TaskRef {
  conversationId: string;
  messageId: string;
  /** When the task was made, in ms since the epoch. */
  createdAt: number;
  /** Events up to here came before the message. */
  afterSeq: number;
  /** Runs numbered up to here did not take the message. */
  afterRun: number;
  /** The progress token of the call that made the task, which its progress goes on carrying. */
  progressToken?: string | number;
}

const PREFIX = 'task1.';
const MAX_TASK_ID_CHARS = 2_048;

const TaskRefSchema = z.strictObject({
  c: z.string().min(1).max(200),
  m: z.string().min(1).max(200),
  t: z.number().int().nonnegative(),
  s: z.number().int().nonnegative(),
  r: z.number().int().nonnegative(),
  p: z.union([z.string().max(200), z.number()]).optional(),
});

export function taskIdOf(ref: TaskRef): string {
  const fields = {
    c: ref.conversationId,
    m: ref.messageId,
    t: ref.createdAt,
    s: ref.afterSeq,
    r: ref.afterRun,
    ...(ref.progressToken !== undefined ? { p: ref.progressToken } : {}),
  };
  return `${PREFIX}${Buffer.from(JSON.stringify(fields)).toString('base64url')}`;
}

/** The task an id names, or undefined when it names none this server made. */
export function taskRefOf(taskId: string): TaskRef | undefined {
  if (!taskId.startsWith(PREFIX) || taskId.length > MAX_TASK_ID_CHARS) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(taskId.slice(PREFIX.length), 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const parsed = TaskRefSchema.safeParse(json);
  if (!parsed.success || sessionIdProblem(parsed.data.c) !== undefined) return undefined;
  const { c, m, t, s, r, p } = parsed.data;
  return {
    conversationId: c,
    messageId: m,
    createdAt: t,
    afterSeq: s,
    afterRun: r,
    ...(p !== undefined ? { progressToken: p } : {}),
  };
}
