import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { invalidInput } from '../shared/conversation-errors';

/** The conversation id a `/v1/conversations/:id/…` route names. */
export const idOf = (request: FastifyRequest) => (request.params as { id: string }).id;

/** The body as `schema` takes it, or 400 naming each problem (`invalid body: unknown key "options.execSecurty"`). */
export function parseBody<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw invalidInput('body', parsed.error);
  return parsed.data;
}
