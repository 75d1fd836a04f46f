import { z } from 'zod';
import { readBoundedText } from './bounded-response';
import { inertLine } from './inert-text';

/** The most of a card read: cards are a few kilobytes. */
export const MAX_CARD_BYTES = 256 * 1024;
/** How long a card may take to arrive, whole, unless told otherwise. */
const CARD_TIMEOUT_MS = 10_000;
/** The most of a card's description a tool's description carries. */
const MAX_DESCRIPTION_CHARS = 1_000;

// The whole card is bounded (MAX_CARD_BYTES); each text is cut to what it is shown as.
const Text = z.string();
/** What is read of a card (A2A 1.0, ProtoJSON); everything else in it is ignored. */
const RemoteCardSchema = z.object({
  name: Text,
  description: Text.optional(),
  version: Text.optional(),
  supportedInterfaces: z
    .array(z.object({ url: Text, protocolBinding: Text.optional(), protocolVersion: Text.optional() }))
    .max(64)
    .optional(),
  capabilities: z.object({ streaming: z.boolean().optional() }).optional(),
  skills: z
    .array(z.object({ name: Text.optional(), description: Text.optional() }))
    .max(256)
    .optional(),
});

/** A remote agent as its card describes it: what a person or a model is shown, and where calls go. */
export interface RemoteCard {
  /** The card's name, one printable line of at most 100 characters. */
  name: string;
  /** The card's description, one printable line of at most 1,000 characters. */
  description: string;
  /** Its skills' names, printable and short. */
  skills: string[];
  /** The JSON-RPC endpoint, on the card's own origin. */
  endpoint: string;
  /** Whether the card says the agent streams. */
  streaming: boolean;
}

/** A card that is not one this runtime will call: its reason says why. */
export class CardRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CardRefusedError';
  }
}

/**
 * Fetches and reads a remote agent's card: at most MAX_CARD_BYTES within ten seconds, no redirect
 * followed. The JSON-RPC interface of A2A 1.x it names must be on the card's own origin: a card that
 * sends calls (and the bearer token they carry) to another host is refused, whoever wrote it.
 */
export async function fetchRemoteCard(
  cardUrl: string,
  options: { token?: string; fetchImpl?: typeof fetch; signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<RemoteCard> {
  const response = await (options.fetchImpl ?? fetch)(cardUrl, {
    headers: {
      accept: 'application/json',
      'a2a-version': '1.0',
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
    },
    redirect: 'error',
    signal: AbortSignal.any([
      AbortSignal.timeout(options.timeoutMs ?? CARD_TIMEOUT_MS),
      ...(options.signal ? [options.signal] : []),
    ]),
  });
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new CardRefusedError(`the card at ${cardUrl} answered HTTP ${response.status}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(await readBoundedText(response, MAX_CARD_BYTES));
  } catch (error) {
    throw new CardRefusedError(`the card at ${cardUrl} is not usable JSON: ${(error as Error).message}`);
  }
  return readRemoteCard(json, cardUrl);
}

/** A card's JSON as a RemoteCard, or CardRefusedError saying why not. */
export function readRemoteCard(json: unknown, cardUrl: string): RemoteCard {
  const parsed = RemoteCardSchema.safeParse(json);
  if (!parsed.success) throw new CardRefusedError(`the card at ${cardUrl} is not an A2A agent card`);
  const card = parsed.data;
  const origin = new URL(cardUrl).origin;
  const jsonRpc = (card.supportedInterfaces ?? []).filter(
    (entry) =>
      (entry.protocolBinding ?? 'JSONRPC').toUpperCase() === 'JSONRPC' &&
      /^1(\.\d+)*$/.test(entry.protocolVersion ?? '1.0'),
  );
  if (jsonRpc.length === 0)
    throw new CardRefusedError(`the card at ${cardUrl} offers no A2A 1.0 JSON-RPC interface`);
  const endpoint = jsonRpc.find((entry) => originOf(entry.url) === origin)?.url;
  if (endpoint === undefined) {
    const elsewhere = inertLine(jsonRpc[0]!.url, 200);
    throw new CardRefusedError(
      `the card at ${cardUrl} sends calls to ${elsewhere}, not to its own origin ${origin}: refused`,
    );
  }
  return {
    name: inertLine(card.name, 100) || 'remote agent',
    description: inertLine(card.description ?? '', MAX_DESCRIPTION_CHARS),
    skills: (card.skills ?? [])
      .map((skill) => inertLine(skill.name ?? '', 60))
      .filter(Boolean)
      .slice(0, 16),
    endpoint,
    streaming: card.capabilities?.streaming === true,
  };
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}
