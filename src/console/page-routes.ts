import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { OverviewFilter } from '../client/conversation-overview';
import { type ConsoleKit, frameFor, idOf, sendHtml, signedIn } from './console-kit';
import { page } from './console-layout';
import { controlForms, conversationRegion, runInProgress, runLookup, webUiLink } from './conversation-view';
import { conversationFilters, conversationsRegion } from './conversations-view';
import { html } from './html';
import { inboxRegion } from './inbox-view';

const StatusFilterSchema = z.enum(['running', 'awaiting_approval', 'idle', 'ended']);

/** The pages, and under /console/live the regions of them their script fetches again. */
export function registerPageRoutes(kit: ConsoleKit): void {
  const { routes, reads } = kit;

  routes.get('/console', async (request, reply) => {
    const who = await signedIn(kit, request);
    const filter = filterOf(request.query as Record<string, unknown>);
    const live = `/console/live/conversations${queryString(request)}`;
    const region = conversationsRegion(await reads.conversations(who.token, filter));
    return sendHtml(
      reply,
      page(
        frameFor(kit, who, 'Conversations'),
        html`${conversationFilters(filter)}
          <div data-live="${live}">${region}</div>`,
      ),
    );
  });
  routes.get('/console/live/conversations', async (request, reply) => {
    const who = await signedIn(kit, request);
    const filter = filterOf(request.query as Record<string, unknown>);
    return sendHtml(reply, conversationsRegion(await reads.conversations(who.token, filter)));
  });

  routes.get('/console/inbox', async (request, reply) => {
    const who = await signedIn(kit, request);
    const filter = inboxFilterOf(request.query as Record<string, unknown>);
    const region = inboxRegion(await reads.inbox(who.token, filter), who.session.csrf);
    const live = `/console/live/inbox${queryString(request)}`;
    return sendHtml(
      reply,
      page(
        frameFor(kit, who, 'Inbox'),
        html`${conversationFilters(filter, '/console/inbox')}
          <div data-live="${live}" id="inbox">${region}</div>`,
      ),
    );
  });
  routes.get('/console/live/inbox', async (request, reply) => {
    const who = await signedIn(kit, request);
    const filter = inboxFilterOf(request.query as Record<string, unknown>);
    return sendHtml(reply, inboxRegion(await reads.inbox(who.token, filter), who.session.csrf));
  });

  routes.get('/console/conversations/:id', async (request, reply) => {
    const who = await signedIn(kit, request);
    const id = idOf(request);
    const data = await reads.conversation(who.token, id);
    const live = `/console/live/conversations/${encodeURIComponent(id)}`;
    return sendHtml(
      reply,
      page(
        frameFor(kit, who, id),
        html`${webUiLink(id, kit.deps.webUi)}${controlForms(id, who.session.csrf)}${runLookup(id, data.runs)}${runInProgress(id)}
          <div data-live="${live}" id="conversation">${conversationRegion(data, who.session.csrf)}</div>`,
      ),
    );
  });
  routes.get('/console/live/conversations/:id', async (request, reply) => {
    const who = await signedIn(kit, request);
    return sendHtml(
      reply,
      conversationRegion(await reads.conversation(who.token, idOf(request)), who.session.csrf),
    );
  });
}

function filterOf(query: Record<string, unknown>): OverviewFilter & { idPrefix?: string } {
  const status = StatusFilterSchema.safeParse(query.status);
  return {
    ...(status.success ? { status: status.data } : {}),
    ...(typeof query.agent === 'string' && query.agent ? { agentId: query.agent } : {}),
    ...(typeof query.prefix === 'string' && query.prefix ? { idPrefix: query.prefix } : {}),
  };
}

function inboxFilterOf(query: Record<string, unknown>): { agentId?: string; idPrefix?: string } {
  const { agentId, idPrefix } = filterOf(query);
  return { ...(agentId ? { agentId } : {}), ...(idPrefix ? { idPrefix } : {}) };
}

function queryString(request: FastifyRequest): string {
  const at = request.url.indexOf('?');
  return at < 0 ? '' : request.url.slice(at);
}
