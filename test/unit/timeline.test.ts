import { readFileSync, readdirSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Payload, defaultPayloadConverter } from '@temporalio/common';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { type ExecutionHistory, buildTimeline } from '../../src/history/build-timeline';
import { decodeHistoryPayloads } from '../../src/history/decode-history-payloads';
import { formatTimeline } from '../../src/history/format-timeline';
import type { Timeline, TimelineItem } from '../../src/history/timeline';
import { DirectoryBlobStore } from '../../src/worker/blob-store';
import { LargePayloadCodec } from '../../src/worker/large-payload-codec';

const HISTORIES = path.join(__dirname, '..', 'histories');

function execution(name: string, runId = name): ExecutionHistory {
  return {
    runId,
    history: historyFromJSON(JSON.parse(readFileSync(path.join(HISTORIES, `${name}.json`), 'utf8'))),
  };
}

function timelineOf(...names: string[]): Timeline {
  return buildTimeline(
    'conv',
    names.map((name) => execution(name)),
    defaultPayloadConverter,
  );
}

function itemsOf<K extends TimelineItem['kind']>(
  timeline: Timeline,
  kind: K,
): Array<Extract<TimelineItem, { kind: K }>> {
  return timeline.items.filter((item): item is Extract<TimelineItem, { kind: K }> => item.kind === kind);
}

const recorded = readdirSync(HISTORIES)
  .filter((file) => file.endsWith('.json'))
  .map((file) => file.replace(/\.json$/, ''));

/** Taken from a conversation still open, as the run that found what it replays left it. */
const OPEN = new Set(['approval-decided-with-its-request']);

/**
 * Runs the timeline does not count: it numbers runs by their model calls, and a run aborted before
 * its first model call makes none, so every run after it is numbered one short of the workflow's.
 */
const UNCOUNTED_RUNS: Readonly<Record<string, number>> = { 'abort-accepted-with-its-run': 1 };

describe.each(recorded)('the timeline of %s', (name) => {
  const timeline = timelineOf(name);

  test('says no call took less than no time', () => {
    for (const item of timeline.items) {
      if ('durationMs' in item && item.durationMs !== undefined)
        expect(item.durationMs).toBeGreaterThanOrEqual(0);
      if ('latencyMs' in item && item.latencyMs !== undefined)
        expect(item.latencyMs).toBeGreaterThanOrEqual(0);
    }
  });

  test('numbers runs as the workflow did (its result counts them)', () => {
    const closed = itemsOf(timeline, 'execution_closed')[0] ?? itemsOf(timeline, 'continued_as_new')[0];
    expect(closed !== undefined).toBe(!OPEN.has(name));
    const lastRun = Math.max(0, ...timeline.items.map((item) => item.run ?? 0));
    if (closed?.kind === 'execution_closed')
      expect(lastRun + (UNCOUNTED_RUNS[name] ?? 0)).toBe((closed.detail as { runs: number }).runs);
    for (const started of itemsOf(timeline, 'run_started'))
      expect(started.messageIds.length).toBeGreaterThan(0);
  });

  test('every model and tool call has ended, each tool call after the model call that asked for it', () => {
    for (const call of itemsOf(timeline, 'model_call')) expect(call.outcome).not.toBe('running');
    for (const call of itemsOf(timeline, 'tool_call')) {
      expect(call.outcome).not.toBe('running');
      expect(call.result ?? call.error).toBeDefined();
      const askedAt = timeline.items.findIndex(
        (item) => item.kind === 'model_call' && item.toolCalls.some((asked) => asked.id === call.toolCallId),
      );
      expect(askedAt).toBeGreaterThanOrEqual(0);
      expect(askedAt).toBeLessThan(timeline.items.indexOf(call));
    }
  });
});

test('a fan-out: each tool call with arguments, duration and result; calls the workflow answered itself are not run', () => {
  const timeline = timelineOf('tool-fan-out');
  expect(timeline.executions).toEqual([
    expect.objectContaining({ runId: 'tool-fan-out', status: 'completed' }),
  ]);
  const [first, second] = itemsOf(timeline, 'model_call');
  expect(first).toMatchObject({
    run: 1,
    iteration: 1,
    outcome: 'completed',
    attempts: 1,
    model: 'scripted-model',
    usage: { inputTokens: 10, outputTokens: 5 },
    text: 'Looking.',
    toolCalls: [
      { id: 'call_list', name: 'list_directory' },
      { id: 'call_read', name: 'read' },
      { id: 'call_unknown', name: 'teleport' },
      { id: 'call_bad_json', name: 'read' },
    ],
  });
  expect(first!.latencyMs).toBeGreaterThanOrEqual(0);
  expect(second).toMatchObject({
    run: 1,
    iteration: 2,
    text: 'There is one file, notes.txt.',
    toolCalls: [],
  });

  const tools = Object.fromEntries(itemsOf(timeline, 'tool_call').map((call) => [call.toolCallId, call]));
  expect(tools.call_read).toMatchObject({
    run: 1,
    toolName: 'read',
    arguments: { path: 'notes.txt' },
    ran: true,
    outcome: 'completed',
    attempts: 1,
    isError: false,
    result: 'remember the milk\n',
  });
  expect(tools.call_read!.durationMs).toBeGreaterThanOrEqual(0);
  expect(tools.call_unknown).toMatchObject({
    ran: false,
    outcome: 'not_run',
    isError: true,
    arguments: '{}',
  });
  expect(JSON.parse(tools.call_unknown!.result!)).toMatchObject({ status: 'error', tool: 'teleport' });
  expect(tools.call_bad_json!.result).toMatch(/arguments are not valid JSON/);

  // Each message starts its own run; the second model call belongs to the first run.
  const runs = itemsOf(timeline, 'run_started');
  const messages = itemsOf(timeline, 'user_message');
  expect(messages.map((message) => [message.text, message.via])).toEqual([
    ['Look around', 'signal'],
    ['Thanks', 'signal'],
  ]);
  expect(runs.map((run) => [run.run, run.messageIds])).toEqual([
    [1, [messages[0]!.messageId]],
    [2, [messages[1]!.messageId]],
  ]);
  expect(timeline.items.map((item) => item.kind).slice(-2)).toEqual(['end_requested', 'execution_closed']);
});

test('approvals: who decided, how, and the call they refused', () => {
  const timeline = timelineOf('approval');
  expect(
    itemsOf(timeline, 'approval').map(({ toolCallId, decision, by, reason, via, run }) => ({
      toolCallId,
      decision,
      by,
      reason,
      via,
      run,
    })),
  ).toEqual([
    {
      toolCallId: 'call_write_a',
      decision: 'allow_always',
      by: 'alice',
      reason: undefined,
      via: 'update',
      run: 1,
    },
    {
      toolCallId: 'call_exec_ls',
      decision: 'reject_once',
      by: 'bob',
      reason: 'not today',
      via: 'signal',
      run: 3,
    },
  ]);
  const kinds = timeline.items.map((item) =>
    item.kind === 'tool_call' || item.kind === 'approval' ? `${item.kind}:${item.toolCallId}` : item.kind,
  );
  // A decision comes before the call it allowed or refused.
  expect(kinds.indexOf('approval:call_write_a')).toBeLessThan(kinds.indexOf('tool_call:call_write_a'));
  expect(kinds.indexOf('approval:call_exec_ls')).toBeLessThan(kinds.indexOf('tool_call:call_exec_ls'));
  const refused = itemsOf(timeline, 'tool_call').find((call) => call.toolCallId === 'call_exec_ls');
  expect(refused).toMatchObject({ ran: false, isError: true, run: 3 });
  expect(JSON.parse(refused!.result!)).toMatchObject({
    status: 'blocked',
    reason: 'rejected by bob: not today',
  });
});

test('an approval nobody gave in time is decided by timeout, as the outcome says', () => {
  const timeline = timelineOf('approval-timeout');
  expect(itemsOf(timeline, 'approval')).toEqual([
    expect.objectContaining({
      toolCallId: 'call_exec_late',
      decision: 'reject_once',
      by: 'timeout',
      via: 'timeout',
      reason: 'approval timed out: no decision within 0.5s',
    }),
  ]);
  expect(itemsOf(timeline, 'tool_call')).toEqual([
    expect.objectContaining({ ran: false, status: 'blocked', blockedBy: 'approval_timeout', isError: true }),
  ]);
});

test("the timeout is read from the outcome's fields, never from the text the model reads", () => {
  // The same history with the text changed: the reason no longer says "approval timed out".
  const history = readFileSync(path.join(HISTORIES, 'approval-timeout.json'), 'utf8');
  const reworded = history.replace(/"data": "([^"]+)"/g, (whole, data: string) => {
    const text = Buffer.from(data, 'base64').toString('utf8');
    if (!text.includes('approval timed out')) return whole;
    return `"data": "${Buffer.from(text.replaceAll('approval timed out', 'nobody came')).toString('base64')}"`;
  });
  expect(reworded).not.toBe(history);
  const timeline = buildTimeline(
    'conv',
    [{ runId: 'r', history: historyFromJSON(JSON.parse(reworded)) }],
    defaultPayloadConverter,
  );
  expect(itemsOf(timeline, 'approval')).toEqual([
    expect.objectContaining({
      by: 'timeout',
      via: 'timeout',
      reason: 'nobody came: no decision within 0.5s',
    }),
  ]);
});

test('a history from before outcomes had fields: the refused call is blocked, by whom it does not say', () => {
  const timeline = timelineOf('approval-timeout-before-outcome-fields');
  expect(itemsOf(timeline, 'approval')).toEqual([]);
  const [refused] = itemsOf(timeline, 'tool_call');
  expect(refused).toMatchObject({ ran: false, status: 'blocked', isError: true });
  expect(refused!.blockedBy).toBeUndefined();
  expect(JSON.parse(refused!.result!)).toMatchObject({ status: 'blocked' });
});

test('steer: the update, its receipt, and the interrupted tool with its partial output', () => {
  const timeline = timelineOf('steer');
  expect(itemsOf(timeline, 'steer')).toEqual([
    expect.objectContaining({
      text: 'That is enough',
      messageId: 'steer-14',
      via: 'update',
      interrupting: true,
      run: 1,
    }),
  ]);
  expect(itemsOf(timeline, 'tool_call')[0]).toMatchObject({
    toolName: 'exec',
    ran: true,
    outcome: 'completed',
    aborted: true,
  });
  expect(itemsOf(timeline, 'tool_call')[0]!.result).toMatch(
    /^interrupted and killed\. Output so far:\nline 1\n/,
  );
  // The model call after the steer is the same run.
  expect(itemsOf(timeline, 'model_call').map((call) => [call.run, call.iteration])).toEqual([
    [1, 1],
    [1, 2],
  ]);
});

test('abort: who and why, the run it ended; the next message starts a new run', () => {
  const timeline = timelineOf('abort');
  expect(itemsOf(timeline, 'abort')).toEqual([
    expect.objectContaining({ by: 'ops', reason: 'too slow', via: 'update', abortedRun: 1, run: 1 }),
  ]);
  expect(itemsOf(timeline, 'model_call').map((call) => [call.run, call.iteration])).toEqual([
    [1, 1],
    [2, 1],
  ]);
});

test('a model call that failed for good ends its run, with the error', () => {
  const [failed, answered] = itemsOf(timelineOf('model-error'), 'model_call');
  expect(failed).toMatchObject({ run: 1, outcome: 'failed', attempts: 1 });
  expect(failed!.error).toMatch(/401/);
  expect(answered).toMatchObject({ run: 2, outcome: 'completed', text: 'Hello.' });
});

test('continue-as-new: both executions, the boundary, and runs numbered on from what was carried', () => {
  const timeline = buildTimeline(
    'conv',
    [execution('continue-as-new-first-run', 'first'), execution('continue-as-new', 'last')],
    defaultPayloadConverter,
  );
  expect(timeline.executions.map((run) => [run.runId, run.status])).toEqual([
    ['first', 'continued_as_new'],
    ['last', 'completed'],
  ]);
  const boundary = itemsOf(timeline, 'continued_as_new')[0]!;
  const second = itemsOf(timeline, 'execution_started')[1]!;
  expect(second).toMatchObject({
    execution: 2,
    continuedFrom: expect.any(String),
    carried: { runCount: 4, queuedMessages: 0 },
  });
  expect(boundary.execution).toBe(1);
  expect(itemsOf(timeline, 'run_started').map((run) => [run.execution, run.run])).toEqual([
    [1, 1],
    [1, 2],
    [2, 5],
  ]);
  expect(timeline.items.indexOf(boundary)).toBeLessThan(timeline.items.indexOf(second));
});

test('the human form: a summary, then one line per item with the time since the start', () => {
  const text = formatTimeline(timelineOf('approval'));
  const lines = text.trimEnd().split('\n');
  expect(lines[0]).toBe(
    'conversation conv: 1 execution (latest completed), 3 runs, 6 model calls (60 tokens in, 30 out), 4 tool calls (1 not completed or in error)',
  );
  expect(lines).toHaveLength(timelineOf('approval').items.length + 1);
  expect(lines[1]).toMatch(
    /^ +\+0\.000s {2}execution 1 started \(run id approval\) on task queue record-approval$/,
  );
  expect(text).toMatch(
    /\+\d+\.\d{3}s {2}\[run 1\] approval of call_write_a: allow_always by alice \[update\]\n/,
  );
  expect(text).toMatch(
    /\[run 1\] tool read call_read_notes \{"path":"notes\.txt"\}: \d+ms, 1 attempt → "remember the milk"\n/,
  );
  expect(text).toMatch(
    /\[run 3\] tool exec call_exec_ls \{"command":"ls"\}: not run → "\{\\"status\\":\\"blocked\\"/,
  );
  expect(text).toMatch(
    /\[run 1\] model call 1 \(scripted-model\): \d+ms, 1 attempt, 10 in\/5 out tokens → asks for write, read\n/,
  );
});

test('payloads go through the codecs first: a compressed or blob-stored history reads the same', async () => {
  const store = new DirectoryBlobStore(
    await mkdtemp(path.join(os.tmpdir(), 'durable-agent-timeline-blobs-')),
  );
  const codec = new LargePayloadCodec(store, { compressAboveBytes: 64, offloadAboveBytes: 256 });
  const encoded = execution('tool-fan-out');
  let touched = 0;
  // Encode every payload list as a worker with this codec would have written it.
  const encode = async (node: unknown): Promise<void> => {
    if (typeof node !== 'object' || node === null || ArrayBuffer.isView(node)) return;
    for (const [key, value] of Object.entries(node)) {
      if (key === 'payloads' && Array.isArray(value)) {
        (node as Record<string, unknown>)[key] = await codec.encode(value as Payload[]);
        touched++;
      } else await encode(value);
    }
  };
  await encode(encoded.history.events);
  expect(touched).toBeGreaterThan(10);
  expect(() => buildTimeline('conv', [encoded], defaultPayloadConverter)).not.toThrow();
  expect(JSON.stringify(buildTimeline('conv', [encoded], defaultPayloadConverter))).toMatch(
    /unreadable payload/,
  );

  const decoded = await decodeHistoryPayloads(encoded.history, [codec]);
  expect(decoded.undecoded).toBe(0);
  expect(buildTimeline('conv', [encoded], defaultPayloadConverter)).toEqual(timelineOf('tool-fan-out'));
});

test('a payload the codecs cannot decode is counted and left as stored', async () => {
  const failing = {
    encode: async (payloads: Payload[]) => payloads,
    decode: async (): Promise<Payload[]> => {
      throw new Error('blob missing');
    },
  };
  const decoded = await decodeHistoryPayloads(execution('steer').history, [failing]);
  expect(decoded.undecoded).toBeGreaterThan(0);
  expect(decoded.firstError).toBe('blob missing');
});

test('budget pauses: each decision is in its run, a stop ends the run, and the call it held is not run', () => {
  const timeline = timelineOf('budget');
  expect(
    itemsOf(timeline, 'approval').map((item) => [item.toolCallId, item.decision, item.by, item.run]),
  ).toEqual([
    ['budget-1', 'allow_once', 'alice', 1],
    ['budget-2', 'allow_once', 'bob', 1],
    ['budget-3', 'reject_once', 'alice', 2],
    ['budget-4', 'allow_once', 'alice', 3],
  ]);
  expect(itemsOf(timeline, 'model_call').map((call) => [call.run, call.iteration])).toEqual([
    [1, 1],
    [1, 2],
    [1, 3],
    [2, 1],
    [3, 1],
  ]);
  expect(itemsOf(timeline, 'tool_call').find((call) => call.toolCallId === 'call_budget_4')).toMatchObject({
    run: 2,
    outcome: 'not_run',
    blockedBy: 'budget',
  });
});
