import type { AgentClient } from '../../src/client/agent-client';
import type { ConversationOverview, OverviewFilter } from '../../src/client/conversation-overview';
import { INBOX_CONVERSATIONS, ConsoleReads } from '../../src/console/console-reads';
import { inboxItem } from '../../src/console/inbox-view';
import type { GatewayAccess } from '../../src/gateway/gateway-access';
import type { GatewayToken } from '../../src/gateway/gateway-api';
import { GatewayTokens } from '../../src/gateway/gateway-tokens';
import type { PendingApproval } from '../../src/shared/approvals';

const WAITING = INBOX_CONVERSATIONS + 30;

/** `WAITING` conversations awaiting a decision, listed newest first as visibility lists them; c-0 waits longest. */
function fakeAgent() {
  const asked: string[] = [];
  const tailsRead: string[] = [];
  const listedWith: OverviewFilter[] = [];
  const conversations = Array.from({ length: WAITING }, (_, index): ConversationOverview => ({
    conversationId: `c-${index}`,
    agentId: 'default',
    status: 'awaiting_approval',
    executionStatus: 'RUNNING',
    startTime: new Date(0),
    lastActivity: new Date(1_000_000 + index * 1_000),
  })).reverse();
  const approval = (id: string): PendingApproval => ({
    toolCallId: `call-${id}`,
    toolName: 'record',
    arguments: '{}',
    argumentsLength: 2,
    argumentsSha256: '0'.repeat(64),
    scope: 'record',
    risk: 'low',
    mode: 'always',
    requestedAt: Number(id.slice(2)),
    run: 1,
  });
  const agent = {
    async overview(filter: OverviewFilter) {
      listedWith.push(filter);
      return conversations.slice(0, filter.limit);
    },
    async pendingApprovals(id: string) {
      asked.push(id);
      return [approval(id)];
    },
    async transcriptTail(id: string) {
      tailsRead.push(id);
      return { messages: [{ role: 'user', content: `the turn of ${id}`, timestamp: 0 }], from: 0 };
    },
  } as unknown as AgentClient;
  return { agent, asked, listedWith, tailsRead };
}

const everything: GatewayToken = { name: 'alice', actions: ['*'] };

/** Who may decide what: every action, approve on c-1 only, approve for another agent, no approve, expired. */
const TOKENS = new GatewayTokens([
  { name: 'alice', token: 'alice-token-0123456789', actions: ['*'] },
  { name: 'ones', token: 'ones-token-0123456789', actions: ['approve'], conversationPrefixes: ['c-1'] },
  { name: 'helper-approver', token: 'helper-token-0123456789', actions: ['approve'], agents: ['helper'] },
  { name: 'reader', token: 'reader-token-0123456789', actions: ['status'] },
  {
    name: 'gone',
    token: 'gone-token-0123456789',
    actions: ['*'],
    expiresAt: new Date(Date.now() - 1_000).toISOString(),
  },
]);

test(`the inbox asks only the ${INBOX_CONVERSATIONS} conversations that have waited longest, and counts the rest`, async () => {
  const { agent, asked, listedWith } = fakeAgent();
  const page = await new ConsoleReads(agent, {} as GatewayAccess, TOKENS).inbox(everything);
  const longest = Array.from({ length: INBOX_CONVERSATIONS }, (_, index) => `c-${index}`);
  expect([...asked].sort()).toEqual([...longest].sort());
  expect(page.items.map((item) => item.conversationId).sort()).toEqual([...longest].sort());
  expect(page).toMatchObject({ waitingConversations: WAITING, shownConversations: INBOX_CONVERSATIONS });
  // Every waiting conversation is listed (and counted), not only a first page of the list.
  expect(listedWith[0]!.limit).toBeGreaterThanOrEqual(WAITING);
});

test("the inbox's filter narrows within the token's prefixes, never past them", async () => {
  const { agent, listedWith } = fakeAgent();
  const reads = new ConsoleReads(agent, {} as GatewayAccess, TOKENS);
  const limited: GatewayToken = { name: 'ann', actions: ['status'], conversationPrefixes: ['a-'] };
  await reads.inbox(limited, { idPrefix: 'a-1', agentId: 'helper' });
  expect(listedWith[0]).toMatchObject({
    status: 'awaiting_approval',
    agentId: 'helper',
    idPrefixes: ['a-1'],
  });
  const outside = await reads.inbox(limited, { idPrefix: 'b-' });
  expect(outside).toEqual({ items: [], waitingConversations: 0, shownConversations: 0 });
  expect(listedWith).toHaveLength(1);
});

test("a waiting call's context is read once, not on every refresh", async () => {
  const { agent, asked, tailsRead } = fakeAgent();
  const reads = new ConsoleReads(agent, {} as GatewayAccess, TOKENS);
  await reads.inbox(everything);
  const again = await reads.inbox(everything);
  expect(asked).toHaveLength(2 * INBOX_CONVERSATIONS);
  expect(tailsRead).toHaveLength(INBOX_CONVERSATIONS);
  const item = again.items.find((shown) => shown.conversationId === 'c-3')!;
  expect(item.context).toEqual([{ role: 'user', content: 'the turn of c-3', timestamp: 0 }]);
});

test('each item says who may decide it: the unexpired tokens with approve on its conversation and agent', async () => {
  const { agent } = fakeAgent();
  const page = await new ConsoleReads(agent, {} as GatewayAccess, TOKENS).inbox(everything);
  const of = (id: string) => page.items.find((item) => item.conversationId === id)!.mayDecide;
  expect(of('c-1')).toEqual(['alice', 'ones']);
  expect(of('c-10')).toEqual(['alice', 'ones']);
  expect(of('c-2')).toEqual(['alice']);
});

test('an inbox item under an approval policy says whom it asks, who has allowed and its deadlines', () => {
  const page = inboxItem(
    {
      conversationId: 'c-policy',
      agentId: 'default',
      context: [],
      mayDecide: ['alice', 'bob'],
      approval: {
        toolCallId: 'call_x',
        toolName: 'exec',
        arguments: '{"command":"make deploy"}',
        argumentsLength: 25,
        argumentsSha256: 'cd'.repeat(32),
        scope: 'exec',
        risk: 'high',
        mode: 'ask',
        requestedAt: Date.parse('2025-03-01T10:05:00Z'),
        run: 1,
        policy: {
          rule: 'deploys <&>',
          group: { name: 'leads', members: ['alice', 'bob'], quorum: 2 },
          rejectStops: true,
          allowed: [{ by: 'bob', decision: 'allow_once', via: 'dave' }],
          escalated: false,
          expiry: { at: Date.parse('2025-03-01T14:05:00Z'), reason: 'late' },
        },
      },
    },
    'csrf-token',
  ).text;
  expect(page).toContain(
    '<p class="policy">approval policy deploys &lt;&amp;&gt;: asks 2 of leads (alice, bob); 1 of 2 of leads have allowed (dave for bob); rejected at 2025-03-01T14:05:00.000Z</p>',
  );
});
