import type { AgentClient } from '../../src/client/agent-client';
import type { ConversationOverview, OverviewFilter } from '../../src/client/conversation-overview';
import { ConsoleReads } from '../../src/console/console-reads';
import type { GatewayToken } from '../../src/gateway/gateway-api';
import { GatewayAccess } from '../../src/gateway/gateway-access';
import { GatewayAuthError, GatewayTokens } from '../../src/gateway/gateway-tokens';

/** Two waiting conversations of each agent; every read the console makes is counted. */
function fakeAgent() {
  const reads: string[] = [];
  const conversations = ['support', 'billing'].flatMap((agentId) =>
    [1, 2].map((n): ConversationOverview => ({
      conversationId: `${agentId}-${n}`,
      agentId,
      status: 'awaiting_approval',
      executionStatus: 'RUNNING',
      startTime: new Date(n * 1_000),
    })),
  );
  const agentOf = (id: string) =>
    conversations.find((conversation) => conversation.conversationId === id)!.agentId;
  const agent = {
    async overview(filter: OverviewFilter) {
      reads.push('overview');
      return conversations.filter(
        (conversation) => !filter.agentId || conversation.agentId === filter.agentId,
      );
    },
    async pendingApprovals(id: string) {
      reads.push(`pending ${id}`);
      return [];
    },
    async status(id: string) {
      reads.push(`status ${id}`);
      return { agentId: agentOf(id), status: 'awaiting_approval', runCount: 1 };
    },
    async transcriptTail(id: string) {
      reads.push(`transcript ${id}`);
      return { messages: [], from: 0 };
    },
  } as unknown as AgentClient;
  return { agent, reads };
}

const ENTRIES = [
  { name: 'reader', token: 'reader-token-0123456789', actions: ['status'] },
  { name: 'decider', token: 'decider-token-0123456789', actions: ['approve', 'steer', 'abort', 'end'] },
  { name: 'support-reader', token: 'support-token-0123456789', actions: ['status'], agents: ['support'] },
] satisfies ConstructorParameters<typeof GatewayTokens>[0];
const tokens = new GatewayTokens(ENTRIES);
const token = (name: string): GatewayToken => tokens.byName(name)!;

function readsWith() {
  const { agent, reads } = fakeAgent();
  return { consoleReads: new ConsoleReads(agent, new GatewayAccess(tokens, agent), tokens), reads };
}

test('a token without status reads nothing: no list, no inbox, no conversation, and nothing asked of Temporal', async () => {
  const { consoleReads, reads } = readsWith();
  expect(await consoleReads.conversations(token('decider'), {})).toEqual([]);
  expect((await consoleReads.inbox(token('decider'))).items).toEqual([]);
  expect((await consoleReads.inbox(token('decider'))).waitingConversations).toBe(0);
  await expect(consoleReads.conversation(token('decider'), 'support-1')).rejects.toThrow(GatewayAuthError);
  expect(reads).toEqual([]);
  expect((await consoleReads.conversations(token('reader'), {})).length).toBe(4);
});

test('a token limited to some agents sees only their conversations, whatever the filter asks', async () => {
  const { consoleReads } = readsWith();
  const listed = await consoleReads.conversations(token('support-reader'), {});
  expect(listed.map((conversation) => conversation.conversationId).sort()).toEqual([
    'support-1',
    'support-2',
  ]);
  expect(await consoleReads.conversations(token('support-reader'), { agentId: 'billing' })).toEqual([]);
  const inbox = await consoleReads.inbox(token('support-reader'));
  expect(inbox.waitingConversations).toBe(2);
  await expect(consoleReads.conversation(token('support-reader'), 'billing-1')).rejects.toThrow(
    'may not act for agent billing',
  );
  expect((await consoleReads.conversation(token('support-reader'), 'support-1')).agentId).toBe('support');
});
