import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayToken } from '../gateway/gateway-api';
import { GatewayAuthError } from '../gateway/gateway-tokens';
import { type ConsoleKit, sendHtml, signedIn } from './console-kit';
import { signInPage } from './console-layout';
import { checkCsrf, checkSameOrigin, clearedSessionCookie, sessionCookie } from './console-security';
import { SIGN_IN_PATH, linkFieldsOf, linkSignatureValid } from './sign-in-link';

/** Signing in (a one-time link, or a pasted token) and out. */
export function registerSignInRoutes(kit: ConsoleKit): void {
  const { routes, deps, sessions, assets } = kit;
  const refused = (reply: FastifyReply, error: unknown) => {
    if (!(error instanceof GatewayAuthError)) throw error;
    return sendHtml(reply.status(401), signInPage(assets.style.path, `Not signed in: ${error.message}.`));
  };

  routes.get(SIGN_IN_PATH, async (request, reply) => {
    const query = request.query as Record<string, unknown>;
    if (query.sig === undefined) return sendHtml(reply, signInPage(assets.style.path));
    let token: GatewayToken;
    try {
      token = await tokenOfLink(kit, query);
    } catch (error) {
      return refused(reply, error);
    }
    return signInAs(kit, request, reply, token);
  });

  routes.post(SIGN_IN_PATH, async (request, reply) => {
    checkSameOrigin(request);
    const presented = (request.body as Record<string, unknown> | undefined)?.token;
    let token: GatewayToken;
    try {
      token = deps.tokens.authenticatePlain(typeof presented === 'string' ? presented : '');
    } catch (error) {
      return refused(reply, error);
    }
    return signInAs(kit, request, reply, token);
  });

  routes.post('/console/sign-out', async (request, reply) => {
    const who = await signedIn(kit, request);
    checkCsrf(request, who.session);
    await sessions.close(who.session);
    return reply.header('set-cookie', clearedSessionCookie(request)).redirect(SIGN_IN_PATH, 303);
  });
}

/** The token a link signs in as: signed with its key, not expired, not used before, still good. */
async function tokenOfLink(kit: ConsoleKit, query: Record<string, unknown>): Promise<GatewayToken> {
  let fields: ReturnType<typeof linkFieldsOf>;
  try {
    fields = linkFieldsOf(query);
  } catch (error) {
    throw new GatewayAuthError(401, (error as Error).message);
  }
  const { tokens } = kit.deps;
  const token = tokens.byName(fields.name);
  if (!token || !linkSignatureValid(fields, fields.sig, tokens.keyOf(token)))
    throw new GatewayAuthError(401, 'the sign-in link is not valid');
  if (fields.expires <= Date.now()) throw new GatewayAuthError(401, 'the sign-in link has expired');
  if (!(await kit.sessions.spendNonce(fields.nonce, fields.expires)))
    throw new GatewayAuthError(401, 'the sign-in link was used already');
  tokens.recheck(token);
  return token;
}

async function signInAs(kit: ConsoleKit, request: FastifyRequest, reply: FastifyReply, token: GatewayToken) {
  const { session, cookie } = await kit.sessions.open(token);
  return reply.header('set-cookie', sessionCookie(request, cookie, session)).redirect('/console/inbox', 303);
}
