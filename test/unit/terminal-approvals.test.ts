import { PassThrough } from 'node:stream';
import type { ApprovalDecision, PendingApproval } from '../../src/shared/approvals';
import type { AgentEvent } from '../../src/shared/events';
import { TerminalApprovals, argumentsShown } from '../../src/cli/terminal/approvals';
import { printable } from '../../src/shared/printable-text';

type Request = Extract<AgentEvent, { type: 'approval_requested' }>;

const request = (toolCallId: string): Request => ({
  type: 'approval_requested',
  seq: 1,
  at: 0,
  run: 1,
  toolCallId,
  toolName: 'write',
  args: '{}',
  risk: 'medium',
});

const HASH = 'c0'.repeat(32);
const pendingFor = (toolCallId: string): PendingApproval => ({
  toolCallId,
  toolName: 'write',
  arguments: `{"path":"${toolCallId}.txt"}`,
  argumentsLength: `{"path":"${toolCallId}.txt"}`.length,
  argumentsSha256: HASH,
  scope: 'write',
  risk: 'medium',
  mode: 'ask',
  requestedAt: 0,
  run: 1,
});

function setUp(pending: string[]) {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = '';
  const shownChanged: Array<() => void> = [];
  output.on('data', (chunk: Buffer) => {
    shown += chunk.toString();
    shownChanged.forEach((notify) => notify());
  });
  const decisions: ApprovalDecision[] = [];
  const agent = {
    pendingApprovals: async () => pending.map(pendingFor),
    approve: async (_id: string, decision: ApprovalDecision) => {
      decisions.push(decision);
      pending.splice(pending.indexOf(decision.toolCallId), 1);
      return { toolCallId: decision.toolCallId, toolName: 'write', decision: decision.decision };
    },
  };
  const approvals = new TerminalApprovals(agent, 'conv-1', 'alice', input, output);
  const prompted = (times: number) =>
    new Promise<void>((resolve) => {
      const check = () => (shown.split('? allow [o]nce').length - 1 >= times ? resolve() : undefined);
      shownChanged.push(check);
      check();
    });
  return { input, approvals, decisions, prompted, shown: () => shown };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

test('asks, re-asks on a wrong answer, and sends the decision as the person at the terminal', async () => {
  const { input, approvals, decisions, prompted, shown } = setUp(['call_1']);
  approvals.requested(request('call_1'));
  await prompted(1);
  expect(shown()).toContain('Allow write (call_1)? allow [o]nce, allow [a]lways, [r]eject: ');
  input.write('maybe\n');
  await prompted(2);
  expect(shown()).toContain('Please answer o, a or r.');
  input.write('a\n');
  while (decisions.length === 0) await settled();
  expect(decisions).toEqual([
    { toolCallId: 'call_1', decision: 'allow_always', by: 'alice', argumentsSha256: HASH },
  ]);
  approvals.close();
});

test('a decision made elsewhere withdraws the question; the next one is asked', async () => {
  const { input, approvals, decisions, prompted, shown } = setUp(['call_1', 'call_2']);
  approvals.requested(request('call_1'));
  approvals.requested(request('call_2'));
  await prompted(1);
  approvals.decided('call_1');
  await prompted(2);
  expect(shown()).toContain('Allow write (call_2)?');
  input.write('r\n');
  while (decisions.length === 0) await settled();
  expect(decisions).toEqual([
    { toolCallId: 'call_2', decision: 'reject_once', by: 'alice', argumentsSha256: HASH },
  ]);
  approvals.close();
});

test('a request no longer pending (seen in old events) is not asked', async () => {
  const { approvals, shown } = setUp([]);
  approvals.requested(request('call_old'));
  await settled();
  await settled();
  expect(shown()).toBe('');
  approvals.close();
});

test('the person sees the whole arguments before deciding, and the decision names their hash', async () => {
  const { input, approvals, decisions, prompted, shown } = setUp(['call_1']);
  approvals.requested(request('call_1'));
  await prompted(1);
  expect(shown()).toContain(`arguments (21 characters, SHA-256 ${HASH}):\n{"path":"call_1.txt"}`);
  input.write('o\n');
  while (decisions.length === 0) await settled();
  expect(decisions[0]).toMatchObject({ decision: 'allow_once', argumentsSha256: HASH });
  approvals.close();
});

test('arguments too long for the terminal: their start, their length, the hash and where to read them whole', () => {
  const long = `{"content":"${'x'.repeat(10_000)}"}`;
  const text = argumentsShown('conv 1', {
    ...pendingFor('call_1'),
    arguments: long,
    argumentsLength: long.length,
  });
  expect(text).toContain(`the first 4000 of ${long.length} characters, SHA-256 ${HASH}`);
  expect(text).toContain("durable-agent status 'conv 1' --json");
  expect(text).toContain(`[… ${long.length - 4000} more characters not shown]`);
});

test('arguments that would drive the terminal are shown written out, as they will run', () => {
  const hostile = '{"command":"echo hi\rrm -rf ~ \x1b]0;t\x07"}';
  const text = argumentsShown('conv 1', {
    ...pendingFor('call_1'),
    arguments: hostile,
    argumentsLength: hostile.length,
  });
  expect(text).toContain('{"command":"echo hi\\rrm -rf ~ \\x1b]0;t\\x07"}');
  // Nothing is left for the terminal to act on.
  expect(printable(text)).toBe(text);
});

test('a budget pause is shown as what ran out and what allowing gives, not as arguments', () => {
  const text = argumentsShown('conv 1', {
    ...pendingFor('budget-1'),
    toolName: 'budget',
    run: 2,
    budget: { kind: 'deadlineMs', used: 95_000, limit: 90_000, defaultRaise: 90_000 },
  });
  expect(text).toBe(
    "  run 2 reached its deadline: 95s of 90s; allowing gives it 90s more (or decide with durable-agent approve 'conv 1' budget-1 --raise-deadline DURATION), rejecting stops the run\n",
  );
});

test('a sub-agent’s request is asked with its conversation named and decided on that conversation', async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = '';
  output.on('data', (chunk: Buffer) => (shown += chunk.toString()));
  const asked: string[] = [];
  const approved: Array<{ conversationId: string; toolCallId: string }> = [];
  const agent = {
    pendingApprovals: async (conversationId: string) => {
      asked.push(conversationId);
      return conversationId === 'conv-1.sub-call_spawn' ? [pendingFor('call_child')] : [];
    },
    approve: async (conversationId: string, decision: ApprovalDecision) => {
      approved.push({ conversationId, toolCallId: decision.toolCallId });
      return { toolCallId: decision.toolCallId, toolName: 'write', decision: decision.decision };
    },
  };
  const approvals = new TerminalApprovals(agent, 'conv-1', 'alice', input, output);
  approvals.requested(request('call_child'), 'conv-1.sub-call_spawn');
  await new Promise<void>((resolve) => {
    const check = () => (shown.includes('? allow [o]nce') ? resolve() : setTimeout(check, 5));
    check();
  });
  expect(shown).toContain('Allow write (call_child, sub-agent conv-1.sub-call_spawn)?');
  input.write('o\n');
  await new Promise<void>((resolve) => {
    const check = () => (approved.length ? resolve() : setTimeout(check, 5));
    check();
  });
  expect(asked).toEqual(['conv-1.sub-call_spawn']);
  expect(approved).toEqual([{ conversationId: 'conv-1.sub-call_spawn', toolCallId: 'call_child' }]);
  approvals.close();
});

test("a run waiting for its agent's next day is asked wait or reject: an allow is no answer, a reject stops it", async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = '';
  output.on('data', (chunk: Buffer) => (shown += chunk.toString()));
  const pause: PendingApproval = {
    ...pendingFor('budget-1'),
    toolName: 'budget',
    scope: 'budget',
    mode: 'always',
    budget: {
      kind: 'dailyTokens',
      used: 105,
      limit: 100,
      defaultRaise: 0,
      agentId: 'research',
      resumesAt: Date.parse('2026-11-27T00:00:00Z'),
    },
  };
  const decisions: ApprovalDecision[] = [];
  const agent = {
    pendingApprovals: async () => (decisions.length ? [] : [pause]),
    approve: async (_id: string, decision: ApprovalDecision) => {
      decisions.push(decision);
      return { toolCallId: decision.toolCallId, toolName: 'budget', decision: decision.decision };
    },
  };
  const approvals = new TerminalApprovals(agent, 'conv-1', 'alice', input, output);
  approvals.requested({ ...request('budget-1'), toolName: 'budget' });
  while (!shown.includes('Stop the run')) await settled();
  expect(shown).toContain(
    "run 1 reached its agent research's daily token budget: 105 of 100 tokens today; it goes on by itself at 2026-11-27T00:00:00.000Z",
  );
  expect(shown).toContain('Stop the run (budget-1)? [w]ait for the next day, [r]eject: ');
  input.write('o\n');
  while (!shown.includes('Please answer w or r.')) await settled();
  input.write('r\n');
  while (decisions.length === 0) await settled();
  expect(decisions).toEqual([
    { toolCallId: 'budget-1', decision: 'reject_once', by: 'alice', argumentsSha256: HASH },
  ]);
  approvals.close();
});
