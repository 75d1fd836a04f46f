import { z } from 'zod';

/**
 * Where a task's stream stands: after event `seq` (of run `run`, once known), and within the text of
 * model call `call`, after `textEnd` characters; `answered`: the answer artifact of the run's end (the
 * event after `seq`) was sent, its final status not yet. Sent with every streamed update (as its SSE
 * id and in its metadata under CURSOR_KEY); a client that resubscribes with it (`Last-Event-ID`) gets
 * every update after it and none twice, from whichever gateway it reaches.
 */
export interface StreamCursor {
  seq: number;
  run?: number;
  call?: string;
  textEnd?: number;
  answered?: boolean;
}

/** Where updates carry their cursor in their metadata. */
export const CURSOR_KEY = 'durable-agent/cursor';

const CursorSchema = z.strictObject({
  s: z.number().int().min(0),
  r: z.number().int().min(0).optional(),
  c: z.string().max(256).optional(),
  t: z.number().int().min(0).optional(),
  a: z.literal(1).optional(),
});

export function encodeCursor(cursor: StreamCursor): string {
  const wire = {
    s: cursor.seq,
    ...(cursor.run !== undefined ? { r: cursor.run } : {}),
    ...(cursor.call !== undefined ? { c: cursor.call, t: cursor.textEnd ?? 0 } : {}),
    ...(cursor.answered ? { a: 1 } : {}),
  };
  return Buffer.from(JSON.stringify(wire)).toString('base64url');
}

/** The cursor a client sent back, or undefined for anything this gateway did not make. */
export function decodeCursor(text: string | undefined): StreamCursor | undefined {
  if (text === undefined || text.length > 1024 || !/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const parsed = CursorSchema.safeParse(json);
  if (!parsed.success) return undefined;
  const { s, r, c, t, a } = parsed.data;
  return {
    seq: s,
    ...(r !== undefined ? { run: r } : {}),
    ...(c !== undefined ? { call: c, textEnd: t ?? 0 } : {}),
    ...(a !== undefined ? { answered: true } : {}),
  };
}
