import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
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

/** How often a token file is looked at for changes, at most, unless told otherwise. */
export const TOKEN_FILE_LOOK_MS = 1_000;

/** A token file, and what was seen of it when it was last looked at. */
interface TokenFile {
  path: string;
  lookEveryMs: number;
  lookedAt: number;
  /** When it last changed, its size and inode, as read: a change of any is read again. */
  stamp: string;
  /** The stamp of a version that could not be read, already told of. */
  refusedStamp?: string;
  warn: (line: string) => void;
}

/**
 * The gateway's tokens, looked up by the SHA-256 of what a request presents. Read from a file,
 * they follow it: the file is looked at again at most every second, and read again when it has
 * changed, so a token removed from it (or given another secret) is refused from then on by every
 * gateway reading the file, with no restart.
 */
export class GatewayTokens {
  private byHash: Map<string, GatewayToken>;
  /** Tokens revoked in this process: reading the file again does not bring them back. */
  private readonly revoked = new Set<string>();
  private file?: TokenFile;

  constructor(tokens: readonly GatewayToken[]) {
    this.byHash = indexed(tokens, new Map(), this.revoked);
  }

  /**
   * A token file: `{ "tokens": [{ "name", "sha256" | "token", "actions", "agents"?, "conversationPrefixes"?, "expiresAt"? }] }`.
   * Read again when it changes, looked at at most every `lookEveryMs`; a version that cannot be read
   * (half written, wrong) keeps the tokens read before, and is told to `warn` (stderr by default).
   */
  static fromFile(
    path: string,
    options: { lookEveryMs?: number; warn?: (line: string) => void } = {},
  ): GatewayTokens {
    const stamp = stampOf(path);
    const tokens = new GatewayTokens(readTokenFile(path));
    tokens.file = {
      path,
      lookEveryMs: options.lookEveryMs ?? TOKEN_FILE_LOOK_MS,
      lookedAt: Date.now(),
      stamp,
      warn: options.warn ?? ((line) => process.stderr.write(`${line}\n`)),
    };
    return tokens;
  }

  /** The tokens as they are now: the file's, read again first when it has changed. */
  private current(): Map<string, GatewayToken> {
    const file = this.file;
    if (!file || Date.now() - file.lookedAt < file.lookEveryMs) return this.byHash;
    file.lookedAt = Date.now();
    const stamp = stampOf(file.path);
    if (stamp === file.stamp || stamp === file.refusedStamp) return this.byHash;
    try {
      this.byHash = indexed(readTokenFile(file.path), this.byHash, this.revoked);
      file.stamp = stamp;
    } catch (error) {
      file.refusedStamp = stamp;
      file.warn(`${(error as Error).message}; the tokens read before still hold`);
    }
    return this.byHash;
  }

  /** The token whose plain text is `presented`, if it is known and not expired. */
  authenticatePlain(presented: string, now = Date.now()): GatewayToken {
    return this.byKey(sha256(presented.trim()), now);
  }

  /** The token an `Authorization: Bearer …` header names, if it is known and not expired. */
  authenticate(header: string | undefined, now = Date.now()): GatewayToken {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    if (!match) throw new GatewayAuthError(401, 'an Authorization: Bearer <token> header is required');
    const token = this.current().get(sha256(match[1]!));
    if (!token) throw new GatewayAuthError(401, 'unknown token');
    this.recheck(token, now);
    return token;
  }

  /**
   * Throws 401 unless a token authenticated earlier is still good: not expired, and still one of
   * these tokens (not revoked). What a long request (an event stream) asks before each write.
   */
  recheck(token: GatewayToken, now = Date.now()): void {
    if (this.current().get(hashOf(token)) !== token)
      throw new GatewayAuthError(401, `the token ${token.name} has been revoked`);
    if (expired(token, now)) {
      throw new GatewayAuthError(401, `the token ${token.name} expired at ${token.expiresAt}`);
    }
  }

  /** The token of this name, if there is one (names are the identities tokens act as). */
  byName(name: string): GatewayToken | undefined {
    for (const token of this.current().values()) if (token.name === name) return token;
    return undefined;
  }

  /** The token a session or link carries, by its SHA-256, checked as `recheck` does. */
  byKey(key: string, now = Date.now()): GatewayToken {
    const token = this.current().get(key);
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
    return [...this.current().values()]
      .filter((token) => !expired(token, now) && allows(token, action, target))
      .map((token) => token.name)
      .sort();
  }

  /** Refuses `token` from now on, requests in progress included (at their next recheck). */
  revoke(token: GatewayToken): void {
    if (this.byHash.get(hashOf(token)) !== token) return;
    this.revoked.add(hashOf(token));
    this.byHash.delete(hashOf(token));
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

function readTokenFile(path: string): GatewayToken[] {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`cannot read the gateway token file ${path}: ${(error as Error).message}`);
  }
  const parsed = GatewayTokenFileSchema.safeParse(json);
  if (!parsed.success)
    throw new Error(`the gateway token file ${path} is wrong: ${schemaProblems(parsed.error)}`);
  return parsed.data.tokens;
}

/**
 * The tokens by their SHA-256, but for the revoked; a token the same as one of `before` stays that
 * very object, so a request that authenticated with it still passes `recheck`.
 */
function indexed(
  tokens: readonly GatewayToken[],
  before: ReadonlyMap<string, GatewayToken>,
  revoked: ReadonlySet<string>,
): Map<string, GatewayToken> {
  const byHash = new Map<string, GatewayToken>();
  for (const token of tokens) {
    const hash = hashOf(token);
    if (byHash.has(hash)) throw new Error(`two gateway tokens are the same (${token.name})`);
    if (revoked.has(hash)) continue;
    const earlier = before.get(hash);
    byHash.set(hash, earlier && JSON.stringify(earlier) === JSON.stringify(token) ? earlier : token);
  }
  return byHash;
}

function stampOf(path: string): string {
  try {
    const { mtimeMs, size, ino } = statSync(path);
    return `${mtimeMs}:${size}:${ino}`;
  } catch {
    return 'unreadable';
  }
}

function hashOf(token: GatewayToken): string {
  return token.sha256 ?? sha256(token.token!);
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
