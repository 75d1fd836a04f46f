import { formatListing } from '../../src/cli/commands/list';
import { formatStatus } from '../../src/cli/commands/status';

const execution = {
  conversationId: 'conv-1',
  executionStatus: 'RUNNING' as const,
  startTime: new Date('2025-03-01T10:00:00Z'),
  taskQueue: 'durable-agent',
  workflowType: 'conversation',
};
const summary = {
  status: 'running' as const,
  runCount: 3,
  queuedMessages: 1,
  transcriptLength: 14,
  lastSeq: 57,
  pendingApprovals: 1,
};

test('a running conversation with a pending approval says how to decide it', () => {
  const text = formatStatus({
    execution,
    summary,
    pendingApprovals: [
      {
        toolCallId: 'call_w',
        toolName: 'write',
        arguments: '{"path":"a.txt"}',
        argumentsLength: 16,
        argumentsSha256: 'ab'.repeat(32),
        scope: 'write',
        risk: 'medium',
        mode: 'ask',
        requestedAt: Date.parse('2025-03-01T10:05:00Z'),
        run: 3,
      },
    ],
  });
  expect(text).toBe(
    [
      'conversation conv-1: running run 3',
      '  started 2025-03-01T10:00:00.000Z on task queue durable-agent',
      '  3 runs, 14 messages, 1 queued message, last event #57',
      '  waiting for approval (1):',
      '    call_w  write (risk medium, asked 2025-03-01T10:05:00.000Z): {"path":"a.txt"}',
      `      durable-agent approve conv-1 call_w --sha256 ${'ab'.repeat(32)} [--always] [--reject] [--reason TEXT]`,
      '',
    ].join('\n'),
  );
});

test('under an approval policy status says whom a call asks, who has allowed, and its deadlines', () => {
  const text = formatStatus({
    execution,
    summary,
    pendingApprovals: [
      {
        toolCallId: 'call_x',
        toolName: 'exec',
        arguments: '{"command":"make deploy"}',
        argumentsLength: 25,
        argumentsSha256: 'cd'.repeat(32),
        scope: 'exec',
        risk: 'high',
        mode: 'ask',
        requestedAt: Date.parse('2025-03-01T10:05:00Z'),
        expiresAt: Date.parse('2025-03-01T14:05:00Z'),
        run: 3,
        policy: {
          rule: 'deploys',
          group: { name: 'leads', members: ['alice', 'bob', 'carol'], quorum: 2 },
          rejectStops: true,
          escalation: {
            name: 'oncall',
            members: ['dave'],
            quorum: 1,
            at: Date.parse('2025-03-01T10:20:00Z'),
          },
          expiry: { at: Date.parse('2025-03-01T14:05:00Z'), reason: 'too late' },
          allowed: [{ by: 'alice', decision: 'allow_once' }],
          escalated: false,
        },
      },
    ],
  });
  expect(text).toContain(
    '      approval policy deploys: asks 2 of leads (alice, bob, carol); 1 of 2 of leads have allowed (alice); ' +
      'goes to oncall too at 2025-03-01T10:20:00.000Z; rejected at 2025-03-01T14:05:00.000Z\n',
  );
});

test('an idle conversation with nothing pending', () => {
  const text = formatStatus({
    execution,
    summary: { ...summary, status: 'idle', runCount: 1, queuedMessages: 0, pendingApprovals: 0 },
    pendingApprovals: [],
  });
  expect(text).toContain('conversation conv-1: idle\n');
  expect(text).toContain('1 run, 14 messages, 0 queued messages');
  expect(text).toContain('no tool call is waiting for approval');
});

test('an ended conversation is described from Temporal alone', () => {
  expect(
    formatStatus({
      execution: { ...execution, executionStatus: 'COMPLETED', closeTime: new Date('2025-03-02T00:00:00Z') },
    }),
  ).toBe('conversation conv-1: ended (completed at 2025-03-02T00:00:00.000Z)\n');
});

test('a listing line names the conversation and when it started', () => {
  expect(formatListing({ conversationId: 'conv-1', startTime: execution.startTime, taskQueue: 'q' })).toBe(
    'conv-1  started 2025-03-01T10:00:00.000Z',
  );
});

test('an approval mode other than the default is said', () => {
  expect(formatStatus({ execution, summary: { ...summary, approvalMode: 'auto' } })).toContain(
    '\n  approval mode: auto\n',
  );
  expect(formatStatus({ execution, summary: { ...summary, approvalMode: 'default' } })).not.toContain(
    'approval mode',
  );
});

test('what the conversation spent and its budget are said; a budget pause says how to raise it or stop the run', () => {
  const text = formatStatus({
    execution,
    summary: {
      ...summary,
      budget: {
        used: { tokens: 105, toolCalls: 7 },
        run: { run: 3, tokens: 45, toolCalls: 1 },
        limits: { tokens: 100, deadlineAt: Date.parse('2025-03-01T12:00:00Z') },
        startedAt: Date.parse('2025-03-01T10:00:00Z'),
      },
    },
    pendingApprovals: [
      {
        toolCallId: 'budget-1',
        toolName: 'budget',
        arguments: '{}',
        argumentsLength: 2,
        argumentsSha256: 'cd'.repeat(32),
        scope: 'budget',
        risk: 'medium',
        mode: 'always',
        requestedAt: Date.parse('2025-03-01T10:05:00Z'),
        run: 3,
        budget: { kind: 'tokens', used: 105, limit: 100, defaultRaise: 100 },
      },
    ],
  });
  expect(text).toContain(
    [
      '  spent 105 tokens, 7 tool calls (run 3: 45 tokens, 1 tool call)',
      '  budget: 100 tokens, until 2025-03-01T12:00:00.000Z',
      '  waiting for approval (1):',
      '    budget-1  run 3 reached its token budget: 105 of 100 tokens (asked 2025-03-01T10:05:00.000Z)',
      '      durable-agent approve conv-1 budget-1 [--raise-tokens N] (default: 100 tokens more), or --reject to stop the run',
    ].join('\n'),
  );
});

test("an agent's spent day says what the agent spent today, when the run goes on, and that only a reject answers it", () => {
  const text = formatStatus({
    execution,
    summary: {
      ...summary,
      budget: {
        used: { tokens: 45, toolCalls: 3 },
        run: { run: 3, tokens: 45, toolCalls: 3 },
        limits: {},
        startedAt: Date.parse('2025-03-01T10:00:00Z'),
        daily: { agentId: 'research', tokensPerDay: 100 },
      },
    },
    agentToday: { agentId: 'research', day: '2025-03-01', tokens: 105 },
    pendingApprovals: [
      {
        toolCallId: 'budget-1',
        toolName: 'budget',
        arguments: '{}',
        argumentsLength: 2,
        argumentsSha256: 'cd'.repeat(32),
        scope: 'budget',
        risk: 'medium',
        mode: 'always',
        requestedAt: Date.parse('2025-03-01T10:05:00Z'),
        run: 3,
        budget: {
          kind: 'dailyTokens',
          used: 105,
          limit: 100,
          defaultRaise: 0,
          agentId: 'research',
          resumesAt: Date.parse('2025-03-02T00:00:00Z'),
        },
      },
    ],
  });
  expect(text).toContain(
    [
      '  spent 45 tokens, 3 tool calls (run 3: 45 tokens, 3 tool calls)',
      '  agent research today (UTC 2025-03-01, every conversation on every worker): 105 tokens of 100 a day',
      '  waiting for approval (1):',
      "    budget-1  run 3 reached its agent research's daily token budget: 105 of 100 tokens today (asked 2025-03-01T10:05:00.000Z)",
      "      it goes on by itself at 2025-03-02T00:00:00.000Z (the next UTC day), rejecting stops the run; only the worker's operator raises the cap (AGENT_BUDGET_TOKENS_PER_DAY): durable-agent approve conv-1 budget-1 --reject",
    ].join('\n'),
  );
});

test('a forked conversation says where it came from', () => {
  const text = formatStatus({
    execution,
    summary: { ...summary, forkedFrom: { conversationId: 'conv-0', runId: 'run-9', atRun: 2 } },
  });
  expect(text).toContain('\n  forked from conv-0 at run 2 (execution run-9)\n');
  expect(formatStatus({ execution, summary })).not.toContain('forked from');
});

test('a model call that is being tried again shows its attempt, the last error and when the run gives up', () => {
  const text = formatStatus({
    execution: {
      ...execution,
      modelRetry: {
        activityId: '7',
        attempt: 4,
        error: 'the model endpoint answered 503: overloaded',
        givesUpAt: Date.parse('2025-03-01T10:35:00Z'),
      },
    },
    summary,
    pendingApprovals: [],
  });
  expect(text.split('\n')).toContain(
    '  the model call failed (the model endpoint answered 503: overloaded); trying again: attempt 4, until 2025-03-01T10:35:00.000Z',
  );
});

test("how the latest run ended: a refused one with the provider's words, one without words saying so", () => {
  const ended = (lastRun: NonNullable<Parameters<typeof formatStatus>[0]['summary']>['lastRun']) =>
    formatStatus({ execution, summary: { ...summary, lastRun }, pendingApprovals: [] }).split('\n');
  expect(ended({ run: 2, outcome: 'answered' })).toContain('  last run 2: answered');
  expect(ended({ run: 2, outcome: 'budget_exhausted' })).toContain('  last run 2: budget exhausted');
  expect(ended({ run: 3, outcome: 'refused', refusal: 'Declined: it could enable cyber harm.' })).toContain(
    "  last run 3: refused by the model's provider: Declined: it could enable cyber harm.",
  );
  expect(ended({ run: 3, outcome: 'refused' })).toContain(
    "  last run 3: refused by the model's provider (it gave no reason)",
  );
});
