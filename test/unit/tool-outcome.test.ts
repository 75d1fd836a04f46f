import { toolCallEnd } from '../../src/acp/tool-call-view';
import { disabledTools } from '../../src/cli/terminal/disabled-tools';
import { eventLine } from '../../src/client/event-line';
import { toolCallOutcomeLabel } from '../../src/shared/agent-metrics';
import type { AgentEvent } from '../../src/shared/events';
import { ToolResultMessageSchema } from '../../src/shared/messages';
import {
  abortedOutcome,
  blockedOutcome,
  circuitOpenOutcome,
  errorOutcome,
  okOutcome,
  outcomeFieldsOf,
  partialOutcome,
  readOutcomeFields,
  withOutcomeFields,
} from '../../src/shared/tool-outcome';

const textOf = (outcome: { content: Array<{ type: string; text?: string }> }) => outcome.content[0]!.text;

describe('each outcome carries its fields, and the text the model reads is what it always was', () => {
  test('ok: the tool answered', () => {
    const outcome = okOutcome({ content: [{ type: 'text', text: 'hi' }], details: { n: 1 } });
    expect(outcome).toEqual({
      content: [{ type: 'text', text: 'hi' }],
      details: { n: 1 },
      isError: false,
      status: 'ok',
    });
  });

  test('error: its kind as a field and in details, the envelope word for word', () => {
    const outcome = errorOutcome('read', 'FileNotFound', 'no such file: a.txt');
    expect(textOf(outcome)).toBe('{"status":"error","tool":"read","error":"no such file: a.txt"}');
    expect(outcome).toMatchObject({
      isError: true,
      status: 'error',
      errorKind: 'FileNotFound',
      details: { errorKind: 'FileNotFound' },
    });
    expect(outcome.reason).toBeUndefined();
  });

  test("blocked: by whom or what, and the reason as the envelope's", () => {
    const outcome = blockedOutcome('exec', 'approval_timeout', 'approval timed out: no decision within 1s');
    expect(textOf(outcome)).toBe(
      '{"status":"blocked","tool":"exec","reason":"approval timed out: no decision within 1s"}',
    );
    expect(outcome).toEqual({
      content: outcome.content,
      details: { blocked: true },
      isError: true,
      status: 'blocked',
      blockedBy: 'approval_timeout',
      reason: 'approval timed out: no decision within 1s',
    });
  });

  test('aborted with nothing kept: an error the model reads; with output kept: partial, not an error', () => {
    const nothing = abortedOutcome('exec', 'interrupted: the run was aborted');
    expect(textOf(nothing)).toBe(
      '{"status":"aborted","tool":"exec","reason":"interrupted: the run was aborted"}',
    );
    expect(nothing).toMatchObject({
      isError: true,
      aborted: true,
      status: 'aborted',
      reason: 'interrupted: the run was aborted',
    });
    expect(nothing.partial).toBeUndefined();

    const kept = partialOutcome({ content: [{ type: 'text', text: 'line 1' }] });
    expect(kept).toEqual({
      content: [{ type: 'text', text: 'line 1' }],
      isError: false,
      aborted: true,
      status: 'aborted',
      partial: true,
    });
  });

  test('an open circuit: Unavailable, with when it lets calls through again', () => {
    const retryAt = '2026-11-26T10:00:30.000Z';
    const outcome = circuitOpenOutcome('inventory', {
      retryAt,
      nowMs: Date.parse('2026-11-26T10:00:00.000Z'),
      failures: 2,
      lastFailure: 'connection refused',
    });
    expect(textOf(outcome)).toBe(
      JSON.stringify({
        status: 'error',
        tool: 'inventory',
        error: `inventory is temporarily disabled on this worker until ${retryAt} (in 30 s) after 2 failures in a row (last: connection refused); retry after that, or do without it`,
      }),
    );
    expect(outcome).toMatchObject({
      status: 'error',
      errorKind: 'Unavailable',
      retryAt,
      details: { errorKind: 'Unavailable', circuit: { state: 'open', retryAt } },
    });
  });
});

describe('outcomes recorded before they had fields get them from isError, aborted and details, never from text', () => {
  const legacy = (text: string, rest: { isError: boolean; aborted?: boolean; details?: unknown }) => ({
    content: [{ type: 'text' as const, text }],
    ...rest,
  });

  test.each<[string, ReturnType<typeof legacy>, ReturnType<typeof outcomeFieldsOf>]>([
    ['a result', legacy('hi', { isError: false }), { status: 'ok' }],
    [
      'an error',
      legacy('{"status":"error","tool":"read","error":"gone"}', {
        isError: true,
        details: { errorKind: 'FileNotFound' },
      }),
      { status: 'error', errorKind: 'FileNotFound' },
    ],
    [
      'an error whose details a hook rewrote',
      legacy('redacted', { isError: true, details: { redacted: true } }),
      { status: 'error' },
    ],
    [
      'a refusal (whose text says the approval timed out: by whom stays unknown)',
      legacy('{"status":"blocked","tool":"exec","reason":"approval timed out: no decision within 1s"}', {
        isError: true,
        details: { blocked: true },
      }),
      { status: 'blocked' },
    ],
    [
      'an interruption with nothing kept',
      legacy('{"status":"aborted","tool":"exec","reason":"interrupted"}', { isError: true, aborted: true }),
      { status: 'aborted' },
    ],
    [
      'an interruption with output kept',
      legacy('line 1', { isError: false, aborted: true }),
      { status: 'aborted', partial: true },
    ],
    [
      'an open circuit',
      legacy('{"status":"error"}', {
        isError: true,
        details: {
          errorKind: 'Unavailable',
          circuit: { state: 'open', retryAt: '2026-11-26T10:00:30.000Z' },
        },
      }),
      { status: 'error', errorKind: 'Unavailable', retryAt: '2026-11-26T10:00:30.000Z' },
    ],
    [
      'a result whose text looks like an error envelope',
      legacy('{"status":"error","tool":"read","error":"x"}', { isError: false }),
      { status: 'ok' },
    ],
  ])('%s', (_name, stored, fields) => {
    expect(outcomeFieldsOf(stored)).toEqual(fields);
    expect(readOutcomeFields(JSON.parse(JSON.stringify(stored)))).toEqual(fields);
    expect(withOutcomeFields(stored)).toEqual({ ...stored, ...fields });
  });

  test('fields, where recorded, are taken as they are', () => {
    const outcome = blockedOutcome('note', 'hook', 'no notes on Fridays');
    expect(outcomeFieldsOf(outcome)).toEqual({
      status: 'blocked',
      blockedBy: 'hook',
      reason: 'no notes on Fridays',
    });
    expect(readOutcomeFields(JSON.parse(JSON.stringify(outcome)))).toEqual(outcomeFieldsOf(outcome));
  });

  test('a value that is no outcome has no fields; fields that do not parse are derived instead', () => {
    expect(readOutcomeFields('text')).toBeUndefined();
    expect(readOutcomeFields({ content: [] })).toBeUndefined();
    expect(readOutcomeFields({ isError: true, status: 'exploded', details: { blocked: true } })).toEqual({
      status: 'blocked',
    });
  });

  test('a transcript message keeps the fields, and one without them still parses', () => {
    const message = { role: 'toolResult', toolCallId: 'c', toolName: 'exec', timestamp: 1 };
    const blocked = blockedOutcome('exec', 'approval', 'rejected by bob');
    expect(ToolResultMessageSchema.parse({ ...message, ...blocked })).toMatchObject({
      status: 'blocked',
      blockedBy: 'approval',
      reason: 'rejected by bob',
    });
    const old = ToolResultMessageSchema.parse({
      ...message,
      content: blocked.content,
      isError: true,
      details: { blocked: true },
    });
    expect(old.status).toBeUndefined();
    expect(outcomeFieldsOf(old)).toEqual({ status: 'blocked' });
  });
});

describe('readers go by the fields', () => {
  const base = { seq: 1, at: 0, run: 1, toolCallId: 'c', toolName: 'inventory' };
  const end = (rest: Partial<Extract<AgentEvent, { type: 'tool_execution_end' }>>): AgentEvent => ({
    ...base,
    type: 'tool_execution_end',
    isError: true,
    preview: '',
    ...rest,
  });

  test('metrics: the outcome label is the status, an Unavailable error its own', () => {
    expect(toolCallOutcomeLabel(okOutcome({ content: [] }))).toBe('ok');
    expect(toolCallOutcomeLabel(errorOutcome('t', 'Timeout', 'slow'))).toBe('error');
    expect(toolCallOutcomeLabel(blockedOutcome('t', 'hook', 'no'))).toBe('blocked');
    expect(toolCallOutcomeLabel(abortedOutcome('t', 'steered'))).toBe('aborted');
    expect(toolCallOutcomeLabel(partialOutcome({ content: [] }))).toBe('aborted');
    expect(
      toolCallOutcomeLabel(
        circuitOpenOutcome('t', {
          retryAt: new Date().toISOString(),
          nowMs: 0,
          failures: 5,
          lastFailure: 'x',
        }),
      ),
    ).toBe('unavailable');
  });

  test('ACP: only a result the tool gave completes a call; errors, refusals and interruptions fail it', () => {
    expect(toolCallEnd(okOutcome({ content: [] }))).toEqual({
      status: 'completed',
      fields: { status: 'ok' },
    });
    expect(toolCallEnd(partialOutcome({ content: [] })).status).toBe('failed');
    expect(toolCallEnd(blockedOutcome('t', 'approval', 'rejected by bob'))).toEqual({
      status: 'failed',
      fields: { status: 'blocked', blockedBy: 'approval', reason: 'rejected by bob' },
    });
    // An event recorded before the fields existed.
    expect(toolCallEnd({ isError: false, aborted: true }).status).toBe('failed');
  });

  test('the CLI line marks a call by its status', () => {
    expect(eventLine(end({ isError: false, status: 'ok', preview: 'done' }))).toBe('✓ inventory done');
    expect(eventLine(end({ status: 'blocked', blockedBy: 'hook', preview: 'no' }))).toBe('✗ inventory no');
    expect(eventLine(end({ isError: false, aborted: true, status: 'aborted', preview: 'part' }))).toBe(
      '⊘ inventory (interrupted) part',
    );
  });

  test('status: a tool is disabled while the retryAt of its latest end says so, whatever the preview says', () => {
    const later = new Date(Date.now() + 60_000).toISOString();
    const disabledText = `inventory is temporarily disabled on this worker until ${later}`;
    expect(
      disabledTools([end({ status: 'error', errorKind: 'Unavailable', retryAt: later })], Date.now()),
    ).toEqual([{ tool: 'inventory', until: later }]);
    expect(
      disabledTools(
        [end({ status: 'error', errorKind: 'ExecutionFailed', preview: disabledText })],
        Date.now(),
      ),
    ).toEqual([]);
    expect(
      disabledTools(
        [
          end({ status: 'error', errorKind: 'Unavailable', retryAt: later }),
          end({ isError: false, status: 'ok' }),
        ],
        Date.now(),
      ),
    ).toEqual([]);
  });
});
