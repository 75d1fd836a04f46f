import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { forkStart, startFork } from '../client/fork-start';
import { BadRequest } from '../gateway/gateway-errors';
import { stateAtRun } from '../history/state-at-run';
import { TranscriptAtRunError } from '../history/transcript-at-run';
import { type ConsoleKit, frameFor, idOf, sendHtml, signedIn } from './console-kit';
import { page } from './console-layout';
import { checkCsrf } from './console-security';
import { runView } from './run-view';

const RunSchema = z.coerce.number().int().positive();

/**
 * A conversation's past runs: run N from inside (`?n=N`, what each model call was given, read from
 * the conversation's Temporal history), and a fork at run N, which starts a new conversation whose
 * id begins with the original's (so a token limited to a prefix may fork what it may see) and
 * takes the person to it.
 */
export function registerRunRoutes(kit: ConsoleKit): void {
  kit.routes.get('/console/conversations/:id/run', async (request, reply) => {
    const who = await signedIn(kit, request);
    const id = idOf(request);
    await kit.access.authorizeOn(who.token, 'status', id);
    const run = runOf((request.query as Record<string, unknown>).n);
    const { executions, converter } = await kit.deps.agent.history(id);
    const state = atRun(() => stateAtRun(id, executions, run, converter));
    return sendHtml(reply, page(frameFor(kit, who, `${id}, run ${run}`), runView(state, who.session.csrf)));
  });

  kit.routes.post('/console/conversations/:id/fork', async (request, reply) => {
    const who = await signedIn(kit, request);
    checkCsrf(request, who.session);
    const id = idOf(request);
    await kit.access.authorizeOn(who.token, 'start', id);
    const run = runOf((request.body as Record<string, unknown>).run);
    const { executions, converter } = await kit.deps.agent.history(id);
    const start = atRun(() => forkStart(id, executions, run, converter));
    const forkId = `${id}-fork-${randomUUID().slice(0, 8)}`;
    await startFork(kit.deps.agent, forkId, start);
    return reply.redirect(`/console/conversations/${encodeURIComponent(forkId)}`, 303);
  });
}

function runOf(value: unknown): number {
  const run = RunSchema.safeParse(value);
  if (!run.success) throw new BadRequest(`not a run number: ${JSON.stringify(value)}`);
  return run.data;
}

/** A run the histories do not hold is the person's mistake (400), not the gateway's. */
function atRun<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof TranscriptAtRunError) throw new BadRequest(error.message);
    throw error;
  }
}
