import type { AgentClient } from '../client/agent-client';
import type { ConversationOverview, OverviewFilter } from '../client/conversation-overview';
import type { GatewayToken } from '../gateway/gateway-api';
import type { GatewayAccess } from '../gateway/gateway-access';
import type { GatewayTokens } from '../gateway/gateway-tokens';
import type { ConversationPageData } from './conversation-view';
import { DecisionContexts } from './decision-contexts';
import type { InboxItem, InboxPage } from './inbox-view';

/** Messages of the transcript a conversation page shows (the latest). */
const PAGE_MESSAGES = 200;
/** Queries the inbox has in flight at once. */
const INBOX_CONCURRENCY = 16;
/**
 * Conversations whose decisions the inbox shows: those that have waited longest. Each costs a
 * query on every refresh (and one more the first time a call of it is shown), so the inbox stays
 * quick and live however many wait; the rest are counted, and a filter (agent, id prefix) brings
 * them up.
 */
export const INBOX_CONVERSATIONS = 25;
/** Waiting conversations the inbox counts at most. */
const INBOX_LISTED = 10_000;

/**
 * What the console reads, each read limited to what the token may see: the conversations its
 * prefixes and agents allow, and nothing at all without the `status` action.
 */
export class ConsoleReads {
  private readonly contexts: DecisionContexts;

  constructor(
    private readonly agent: AgentClient,
    private readonly access: GatewayAccess,
    private readonly tokens: Pick<GatewayTokens, 'namesAllowed'>,
  ) {
    this.contexts = new DecisionContexts(
      async (conversationId) => (await agent.transcriptTail(conversationId, 4)).messages,
    );
  }

  async conversations(
    token: GatewayToken,
    filter: OverviewFilter & { idPrefix?: string },
  ): Promise<ConversationOverview[]> {
    if (!mayRead(token)) return [];
    const prefixes = narrowedPrefixes(token.conversationPrefixes, filter.idPrefix);
    if (prefixes && prefixes.length === 0) return [];
    const listed = await this.agent.overview({
      ...(filter.status ? { status: filter.status } : {}),
      ...(filter.agentId ? { agentId: filter.agentId } : {}),
      ...(prefixes ? { idPrefixes: prefixes } : {}),
      ...(filter.limit ? { limit: filter.limit } : {}),
    });
    return token.agents
      ? listed.filter((conversation) => token.agents!.includes(conversation.agentId))
      : listed;
  }

  /**
   * The decisions pending in the conversations the token may see, from the INBOX_CONVERSATIONS
   * that have waited longest (by when they began to wait, which their search attributes keep).
   */
  async inbox(token: GatewayToken, filter: { agentId?: string; idPrefix?: string } = {}): Promise<InboxPage> {
    const waiting = await this.conversations(token, {
      ...filter,
      status: 'awaiting_approval',
      limit: INBOX_LISTED,
    });
    const longestWaiting = [...waiting]
      .sort((a, b) => waitingSince(a) - waitingSince(b))
      .slice(0, INBOX_CONVERSATIONS);
    const items: InboxItem[] = [];
    await inLanes(longestWaiting, INBOX_CONCURRENCY, async (conversation) => {
      const { conversationId, agentId } = conversation;
      const pending = await this.agent.pendingApprovals(conversationId).catch(() => []);
      if (pending.length === 0) return;
      const context = await this.contexts.of(conversationId, pending[0]!.toolCallId).catch(() => []);
      const mayDecide = this.tokens.namesAllowed('approve', { conversationId, agentId });
      for (const approval of pending)
        items.push({ conversationId, agentId, approval, context: [...context], mayDecide });
    });
    return { items, waitingConversations: waiting.length, shownConversations: longestWaiting.length };
  }

  /** One conversation's page, if the token may read it (403 otherwise). */
  async conversation(token: GatewayToken, conversationId: string): Promise<ConversationPageData> {
    await this.access.authorizeOn(token, 'status', conversationId);
    const [status, tail, pending] = await Promise.all([
      this.agent.status(conversationId),
      this.agent.transcriptTail(conversationId, PAGE_MESSAGES),
      this.agent.pendingApprovals(conversationId),
    ]);
    return {
      conversationId,
      agentId: status.agentId ?? 'default',
      status: status.status,
      runs: status.runCount,
      transcript: tail.messages,
      from: tail.from,
      pending,
    };
  }
}

function waitingSince(conversation: ConversationOverview): number {
  return (conversation.lastActivity ?? conversation.startTime).getTime();
}

function mayRead(token: GatewayToken): boolean {
  return token.actions.includes('*') || token.actions.includes('status');
}

/** The prefixes to list: the token's, narrowed by the filter's (none left means nothing to list). */
function narrowedPrefixes(
  allowed: readonly string[] | undefined,
  asked: string | undefined,
): string[] | undefined {
  if (!asked) return allowed ? [...allowed] : undefined;
  if (!allowed) return [asked];
  return allowed.flatMap((prefix) =>
    asked.startsWith(prefix) ? [asked] : prefix.startsWith(asked) ? [prefix] : [],
  );
}

/** `each` of the items, `width` at a time: a slow one holds up only its own lane. */
async function inLanes<T>(
  items: readonly T[],
  width: number,
  each: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await each(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
}
