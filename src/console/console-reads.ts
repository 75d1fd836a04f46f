import type { AgentClient } from '../client/agent-client';
import type { ConversationOverview, OverviewFilter } from '../client/conversation-overview';
import type { GatewayToken } from '../gateway/gateway-api';
import type { GatewayAccess } from '../gateway/gateway-access';
import type { ConversationPageData } from './conversation-view';
import type { InboxItem } from './inbox-view';

/** Messages of the transcript a conversation page shows (the latest). */
const PAGE_MESSAGES = 200;
/** Queries the inbox has in flight at once. */
const INBOX_CONCURRENCY = 16;

/**
 * What the console reads, each read limited to what the token may see: the conversations its
 * prefixes and agents allow, and nothing at all without the `status` action.
 */
export class ConsoleReads {
  constructor(
    private readonly agent: AgentClient,
    private readonly access: GatewayAccess,
  ) {}

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
    });
    return token.agents
      ? listed.filter((conversation) => token.agents!.includes(conversation.agentId))
      : listed;
  }

  /** Every decision pending in the conversations the token may see. */
  async inbox(token: GatewayToken): Promise<InboxItem[]> {
    const waiting = await this.conversations(token, { status: 'awaiting_approval' });
    const items: InboxItem[] = [];
    await inBatches(waiting, INBOX_CONCURRENCY, async (conversation) => {
      const [pending, tail] = await Promise.all([
        this.agent.pendingApprovals(conversation.conversationId).catch(() => []),
        this.agent.transcriptTail(conversation.conversationId, 4).catch(() => undefined),
      ]);
      const context = (tail?.messages ?? []).filter((message) => message.role !== 'toolResult').slice(-2);
      for (const approval of pending)
        items.push({
          conversationId: conversation.conversationId,
          agentId: conversation.agentId,
          approval,
          context,
        });
    });
    return items;
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

async function inBatches<T>(
  items: readonly T[],
  size: number,
  each: (item: T) => Promise<void>,
): Promise<void> {
  for (let at = 0; at < items.length; at += size) await Promise.all(items.slice(at, at + size).map(each));
}
