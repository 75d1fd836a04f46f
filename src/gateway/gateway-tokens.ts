import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { schemaProblems } from '../shared/schema-problems';
import { type GatewayAction, type GatewayToken, GatewayTokenFileSchema } from './gateway-api';

/** Why a request is turned away: 401 (who are you?) or 403 (not with this token). */
export class GatewayAuthError extends Error {
  constructor(
    readonly status: 401 | 403,
    message: string,
  ) {
    super(message);
    this.name = 'GatewayAuthError';
  }
}

/** The gateway's tokens, looked up by the SHA-256 of what a request presents. */
export class GatewayTokens {
  private readonly byHash = new Map<string, GatewayToken>();

  constructor(tokens: readonly GatewayToken[]) {
    for (const token of tokens) {
      const hash = hashOf(token);
      if (this.byHash.has(hash)) throw new Error(`two gateway tokens are the same (${token.name})`);
      this.byHash.set(hash, token);
    }
  }

  /** A token file: `{ "tokens": [{ "name", "sha256" | "token", "actions", "agents"?, "conversationPrefixes"?, "expiresAt"? }] }`. */
  static fromFile(file: string): GatewayTokens {
    let json: unknown;
    try {
      json = JSON.parse(readFileSync(file, 'utf8'));
    } catch (error) {
      throw new Error(`cannot read the gateway token file ${file}: ${(error as Error).message}`);
    }
    const parsed = GatewayTokenFileSchema.safeParse(json);
    if (!parsed.success)
      throw new Error(`the gateway token file ${file} is wrong: ${schemaProblems(parsed.error)}`);
    return new GatewayTokens(parsed.data.tokens);
  }

  /** The token whose plain text is `presented`, if it is known and not expired. */
  authenticatePlain(presented: string, now = Date.now()): GatewayToken {
    return this.byKey(sha256(presented.trim()), now);
  }

  /** The token an `Authorization: Bearer …` header names, if it is known and not expired. */
  authenticate(header: string | undefined, now = Date.now()): GatewayToken {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    if (!match) throw new GatewayAuthError(401, 'an Authorization: Bearer <token> header is required');
    const token = this.byHash.get(sha256(match[1]!));
    if (!token) throw new GatewayAuthError(401, 'unknown token');
    this.recheck(token, now);
    return token;
  }

  /**
   * Throws 401 unless a token authenticated earlier is still good: not expired, and still one of
   * these tokens (not revoked). What a long request (an event stream) asks before each write.
   */
  recheck(token: GatewayToken, now = Date.now()): void {
    if (this.byHash.get(hashOf(token)) !== token)
      throw new GatewayAuthError(401, `the token ${token.name} has been revoked`);
    if (expired(token, now)) {
      throw new GatewayAuthError(401, `the token ${token.name} expired at ${token.expiresAt}`);
    }
  }

  /** The token of this name, if there is one (names are the identities tokens act as). */
  byName(name: string): GatewayToken | undefined {
    for (const token of this.byHash.values()) if (token.name === name) return token;
    return undefined;
  }

  /** The token a session or link carries, by its SHA-256, checked as `recheck` does. */
  byKey(key: string, now = Date.now()): GatewayToken {
    const token = this.byHash.get(key);
    if (!token) throw new GatewayAuthError(401, 'unknown token');
    this.recheck(token, now);
    return token;
  }

  /** The token's SHA-256 (hex): what the file keeps, and the key its sign-in links are signed with. */
  keyOf(token: GatewayToken): string {
    return hashOf(token);
  }

  /** The names of the unexpired tokens that may take `action` on `target`: who may decide there, say. */
  namesAllowed(
    action: GatewayAction,
    target: { conversationId?: string; agentId?: string },
    now = Date.now(),
  ): string[] {
    return [...this.byHash.values()]
      .filter((token) => !expired(token, now) && allows(token, action, target))
      .map((token) => token.name)
      .sort();
  }

  /** Refuses `token` from now on, requests in progress included (at their next recheck). */
  revoke(token: GatewayToken): void {
    if (this.byHash.get(hashOf(token)) === token) this.byHash.delete(hashOf(token));
  }
}

/** Throws 403 unless `token` may take `action` on `conversationId` (of `agentId`, when known). */
export function authorize(
  token: GatewayToken,
  action: GatewayAction,
  target: { conversationId?: string; agentId?: string },
): void {
  if (!token.actions.includes('*') && !token.actions.includes(action)) {
    throw new GatewayAuthError(403, `the token ${token.name} may not ${action}`);
  }
  const { conversationId, agentId } = target;
  if (
    conversationId !== undefined &&
    token.conversationPrefixes &&
    !token.conversationPrefixes.some((prefix) => conversationId.startsWith(prefix))
  ) {
    throw new GatewayAuthError(403, `the token ${token.name} may not reach conversation ${conversationId}`);
  }
  if (agentId !== undefined && token.agents && !token.agents.includes(agentId)) {
    throw new GatewayAuthError(403, `the token ${token.name} may not act for agent ${agentId}`);
  }
}

function expired(token: GatewayToken, now: number): boolean {
  return token.expiresAt !== undefined && Date.parse(token.expiresAt) <= now;
}

function allows(
  token: GatewayToken,
  action: GatewayAction,
  target: { conversationId?: string; agentId?: string },
): boolean {
  try {
    authorize(token, action, target);
    return true;
  } catch (error) {
    if (error instanceof GatewayAuthError) return false;
    throw error;
  }
}

function hashOf(token: GatewayToken): string {
  return token.sha256 ?? sha256(token.token!);
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
