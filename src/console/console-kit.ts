import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayAccess } from '../gateway/gateway-access';
import type { GatewayDeps } from '../gateway/gateway-deps';
import type { ConsoleAsset } from './console-assets';
import type { PageFrame } from './console-layout';
import type { ConsoleReads } from './console-reads';
import { sessionCookieOf } from './console-security';
import type { ConsoleSessions, SignedIn } from './console-sessions';
import type { SafeHtml } from './html';

export type { SignedIn } from './console-sessions';

/** What the console's route files share: the plugin they register on and the gateway's parts. */
export interface ConsoleKit {
  routes: FastifyInstance;
  deps: GatewayDeps;
  access: GatewayAccess;
  sessions: ConsoleSessions;
  reads: ConsoleReads;
  assets: { script: ConsoleAsset; style: ConsoleAsset };
}

/** The request's person, or 401 (a page then sends them to sign in). */
export function signedIn(kit: ConsoleKit, request: FastifyRequest): Promise<SignedIn> {
  return kit.sessions.lookup(sessionCookieOf(request));
}

/** An HTML answer no cache keeps. */
export function sendHtml(reply: FastifyReply, content: SafeHtml) {
  return reply.type('text/html; charset=utf-8').header('cache-control', 'no-store').send(content.text);
}

export function frameFor(kit: ConsoleKit, who: SignedIn, title: string): PageFrame {
  return {
    title,
    who: who.token.name,
    csrf: who.session.csrf,
    scriptPath: kit.assets.script.path,
    stylePath: kit.assets.style.path,
  };
}

export function idOf(request: FastifyRequest): string {
  return (request.params as { id: string }).id;
}
