import { randomUUID } from 'node:crypto';
import { z } from 'zod';

/**
 * What the server knows of the client it talks to, all of it said by the client itself: kept in no
 * process, but in the session id the client sends with every request, so any gateway (restarted, or
 * another replica) reads it alike.
 */
export interface McpSession {
  /** Unique to one connection of one client: with a request's JSON-RPC id, it names one tool call. */
  nonce?: string;
  /** The client answers form elicitations (it said `elicitation` at initialize). */
  elicits: boolean;
}

const PREFIX = 'da1.';
const MAX_SESSION_ID_CHARS = 512;
const SessionSchema = z.strictObject({ n: z.string().uuid(), e: z.boolean() });

/** Whether the capabilities a client declared at initialize include form elicitation. */
export function elicitsForms(capabilities: unknown): boolean {
  const elicitation = (capabilities as { elicitation?: { form?: unknown; url?: unknown } } | undefined)
    ?.elicitation;
  if (typeof elicitation !== 'object' || elicitation === null) return false;
  // An empty `elicitation` is form elicitation, as before the spec had the URL mode.
  return elicitation.form !== undefined || elicitation.url === undefined;
}

/** A new session for a client that initializes with these capabilities. */
export function newSession(capabilities: unknown): McpSession {
  return { nonce: randomUUID(), elicits: elicitsForms(capabilities) };
}

/** The `Mcp-Session-Id` that carries `session` (visible ASCII, as the transport requires). */
export function sessionIdOf(session: McpSession): string {
  return `${PREFIX}${Buffer.from(JSON.stringify({ n: session.nonce, e: session.elicits })).toString('base64url')}`;
}

/** The session a request's `Mcp-Session-Id` names; none (no nonce, no elicitation) when it names none we made. */
export function sessionFromId(header: string | string[] | undefined): McpSession {
  if (typeof header !== 'string' || !header.startsWith(PREFIX) || header.length > MAX_SESSION_ID_CHARS)
    return { elicits: false };
  try {
    const parsed = SessionSchema.safeParse(
      JSON.parse(Buffer.from(header.slice(PREFIX.length), 'base64url').toString('utf8')),
    );
    return parsed.success ? { nonce: parsed.data.n, elicits: parsed.data.e } : { elicits: false };
  } catch {
    return { elicits: false };
  }
}
