import { eventLine } from '../../src/client/event-line';
import type { AgentEvent } from '../../src/shared/events';

const base = { seq: 7, at: 0, run: 2 };

test.each<[AgentEvent, string | undefined]>([
  [{ ...base, type: 'run_started', messageIds: ['m'] }, undefined],
  [
    { ...base, type: 'subagent_started', toolCallId: 'c', conversationId: 'p.sub-c', task: 'Look\naround' },
    '⇉ sub-agent p.sub-c: Look around',
  ],
  [
    {
      ...base,
      type: 'compacted',
      removedMessages: 40,
      keptMessages: 9,
      tokensBefore: 120_000,
      tokensAfter: 18_000,
    },
    '⇣ compacted: 40 older messages summarised (about 120000 → 18000 tokens)',
  ],
  [
    {
      ...base,
      type: 'model_response',
      iteration: 1,
      text: 'Let me look.',
      toolCalls: [{ id: 'c', name: 'read' }],
    },
    '· Let me look.',
  ],
  [{ ...base, type: 'model_response', iteration: 2, text: 'The answer.', toolCalls: [] }, undefined],
  [
    { ...base, type: 'model_retry', attempt: 3, error: 'the model endpoint answered 429:\nslow down' },
    '↻ the model call failed (the model endpoint answered 429: slow down); trying again: attempt 3',
  ],
  [
    {
      ...base,
      type: 'model_retry',
      attempt: 2,
      error: 'socket hang up',
      givesUpAt: Date.parse('2026-01-01T00:30:00Z'),
    },
    '↻ the model call failed (socket hang up); trying again: attempt 2, until 2026-01-01T00:30:00.000Z',
  ],
  [
    { ...base, type: 'tool_execution_start', toolCallId: 'c', toolName: 'read', args: '{"path":\n"a.txt"}' },
    '→ read {"path": "a.txt"}',
  ],
  [
    { ...base, type: 'tool_execution_update', toolCallId: 'c', toolName: 'exec', text: 'line 1\nline 2\n' },
    '  … exec line 2',
  ],
  [
    { ...base, type: 'tool_execution_update', toolCallId: 'c', toolName: 'count', details: { step: 3 } },
    '  … count {"step":3}',
  ],
  [{ ...base, type: 'tool_execution_update', toolCallId: 'c', toolName: 'count' }, undefined],
  [
    {
      ...base,
      type: 'tool_execution_end',
      toolCallId: 'c',
      toolName: 'read',
      isError: false,
      preview: 'hello',
    },
    '✓ read hello',
  ],
  [
    {
      ...base,
      type: 'tool_execution_end',
      toolCallId: 'c',
      toolName: 'read',
      isError: true,
      preview: 'no such file',
    },
    '✗ read no such file',
  ],
  [
    {
      ...base,
      type: 'tool_execution_end',
      toolCallId: 'c',
      toolName: 'exec',
      isError: true,
      aborted: true,
      preview: 'partial',
    },
    '⊘ exec (interrupted) partial',
  ],
  [
    {
      ...base,
      type: 'approval_requested',
      toolCallId: 'call_w',
      toolName: 'write',
      args: '{"path":"a"}',
      risk: 'medium',
    },
    '? write needs approval (risk medium, call call_w): {"path":"a"}',
  ],
  [
    {
      ...base,
      type: 'approval_decided',
      toolCallId: 'call_w',
      toolName: 'write',
      decision: 'allow_always',
      by: 'ops',
    },
    '✓ write allowed always by ops',
  ],
  [
    {
      ...base,
      type: 'approval_decided',
      toolCallId: 'call_w',
      toolName: 'write',
      decision: 'reject_once',
      by: 'timeout',
      reason: 'no decision in 5 s',
    },
    '✗ write rejected by timeout: no decision in 5 s',
  ],
  [
    { ...base, type: 'steered', messageId: 'm2', text: 'Use the other file', interrupted: ['c1', 'c2'] },
    '↪ steered (interrupted 2 tools): Use the other file',
  ],
  [
    { ...base, type: 'aborted', by: 'alice', reason: 'wrong', interrupted: ['c1'] },
    '■ aborted by alice (interrupted 1 tool): wrong',
  ],
  [{ ...base, type: 'aborted', interrupted: [] }, '■ aborted'],
  [{ ...base, type: 'run_finished', messageIds: ['m'], outcome: 'aborted', answer: '' }, undefined],
  [{ ...base, type: 'error', message: 'model said 401' }, '! model said 401'],
  [
    {
      ...base,
      type: 'approval_requested',
      toolCallId: 'budget-1',
      toolName: 'budget',
      args: '{"kind":"tokens","used":105,"limit":100,"defaultRaise":100}',
      risk: 'medium',
    },
    '? run 2 reached its token budget: 105 of 100 tokens; budget-1 waits: allowing gives 100 tokens more, rejecting stops the run',
  ],
  [
    {
      ...base,
      type: 'budget_exhausted',
      budget: 'toolCalls',
      used: 3,
      limit: 3,
      by: 'alice',
      reason: 'enough',
    },
    '■ run stopped: tool-call budget exhausted (3 of 3 tool calls used); stopped by alice: enough',
  ],
  [
    {
      ...base,
      type: 'approval_requested',
      toolCallId: 'budget-2',
      toolName: 'budget',
      args: '{"kind":"dailyTokens","used":105,"limit":100,"defaultRaise":0,"agentId":"research","resumesAt":1795737600000}',
      risk: 'medium',
    },
    "? run 2 reached its agent research's daily token budget: 105 of 100 tokens today; budget-2 waits: it goes on by itself at 2026-11-27T00:00:00.000Z (the next UTC day), rejecting stops the run; only the worker's operator raises the cap (AGENT_BUDGET_TOKENS_PER_DAY)",
  ],
  [
    { ...base, type: 'budget_exhausted', budget: 'dailyTokens', used: 105, limit: 100, by: 'bob' },
    "■ run stopped: agent's daily token budget exhausted (105 of 100 tokens used today by the agent); stopped by bob",
  ],
  [
    { ...base, type: 'budget_exhausted', budget: 'deadlineMs', used: 95_000, limit: 90_000, by: 'timeout' },
    '■ run stopped: deadline exhausted (95s of 90s since the conversation started); nobody decided in time',
  ],
])('%j renders as %j', (event, line) => {
  expect(eventLine(event)).toBe(line);
});

test('long arguments are cut to one line', () => {
  const line = eventLine({
    ...base,
    type: 'tool_execution_start',
    toolCallId: 'c',
    toolName: 'write',
    args: 'x'.repeat(500),
  });
  expect(line).toHaveLength('→ write '.length + 120);
  expect(line!.endsWith('…')).toBe(true);
});
