import { ActivityCancellationDetails, ApplicationFailure, type MetricMeter } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { z } from 'zod';
import { createRunTool } from '../../src/activities/run-tool';
import { toolResultOfMcp } from '../../src/mcp/mcp-result';
import type { AfterToolCallEvent, ToolHooks } from '../../src/tools/tool-hooks';
import type { ToolErrorKind } from '../../src/shared/tool-errors';
import type { ToolOutcome } from '../../src/shared/tool-outcome';
import type { ToolRunInput } from '../../src/shared/tool-run';
import { METRIC } from '../../src/shared/agent-metrics';
import { ToolCircuitBreakers } from '../../src/tools/circuit-breaker';
import { ToolRegistry } from '../../src/tools/registry';
import { type AgentTool, defineTool, jsonResult, textResult } from '../../src/tools/tool';
import { ToolError } from '../../src/tools/tool-error';
import { makeTempDir, removeDir } from './tool-harness';

/** Calls, by tool call id, with the params the tool got. */
const seen = new Map<string, Record<string, unknown>>();

const noteTool = defineTool({
  name: 'note',
  label: 'Note',
  description: 'Writes a note.',
  parameters: z.object({
    file_path: z.string().min(1),
    text: z.string(),
    max_lines: z.number().int().default(10),
  }),
  verbatimParameters: ['text'],
  category: 'files',
  idempotent: false,
  risk: 'low',
  async execute(toolCallId, params) {
    seen.set(toolCallId, params);
    return jsonResult({ wrote: params.file_path, secret: 'sk-123' });
  },
});

/** Throws the ToolError its arguments name. */
const failingTool = (idempotent: boolean): AgentTool =>
  defineTool({
    name: idempotent ? 'fails_read_only' : 'fails_with_effects',
    label: 'Fails',
    description: 'Fails as told.',
    parameters: z.object({ kind: z.string() }),
    category: 'other',
    idempotent,
    risk: 'low',
    async execute(_id, params) {
      throw new ToolError(params.kind as ToolErrorKind, `failed with ${params.kind}`);
    },
  }) as AgentTool;

/** A read-only MCP tool whose server answers with an error result. */
const mcpErrorTool = defineTool({
  name: 'mcp_denies',
  label: 'MCP error',
  description: 'Answers as an MCP server that refuses.',
  parameters: z.object({}),
  category: 'mcp',
  idempotent: true,
  risk: 'low',
  async execute() {
    return toolResultOfMcp({ isError: true, content: [{ type: 'text', text: 'permission denied: /srv' }] });
  },
}) as AgentTool;

/** Waits until its call is stopped; counts its starts. */
let waitStarts = 0;
const waitTool = defineTool({
  name: 'wait_until_stopped',
  label: 'Wait',
  description: 'Waits until stopped.',
  parameters: z.object({}),
  category: 'files',
  idempotent: true,
  risk: 'low',
  async execute(_id, _params, signal) {
    waitStarts++;
    await new Promise((_resolve, reject) => signal?.addEventListener('abort', () => reject(signal.reason)));
    return textResult('never');
  },
}) as AgentTool;

const registry = new ToolRegistry([
  noteTool as AgentTool,
  waitTool,
  failingTool(true),
  failingTool(false),
  mcpErrorTool,
]);

let workspace: string;
beforeAll(async () => {
  workspace = await makeTempDir();
});
afterAll(() => removeDir(workspace));

function call(
  toolName: string,
  args: Record<string, unknown>,
  toolCallId = `call_${seen.size}_${Math.random()}`,
) {
  return { conversationId: 'c1', toolCallId, toolName, arguments: args, workspace } satisfies ToolRunInput;
}

function run(
  input: ToolRunInput,
  hooks: ToolHooks[] = [],
  attempt = 1,
  runTool = createRunTool({ tools: registry, defaultWorkspace: workspace, hooks }),
): Promise<ToolOutcome> {
  // Quiet: failing attempts and failing after hooks are what some tests are about.
  const logger = new DefaultLogger('ERROR', () => {});
  return new MockActivityEnvironment({ attempt, heartbeatTimeoutMs: 10_000 }, { logger }).run(
    runTool,
    input,
  ) as Promise<ToolOutcome>;
}

const text = (outcome: { content: { type: string; text?: string }[] }) =>
  outcome.content.map((block) => block.text ?? '').join('');

describe('arguments are normalised before validation', () => {
  test('Claude Code names, camelCase, coercion and trimming reach the tool as declared', async () => {
    const input = call('note', { filePath: '  notes.md ', text: '  keep me \n', maxLines: '3' });
    const outcome = await run(input);
    expect(outcome.isError).toBe(false);
    expect(seen.get(input.toolCallId)).toEqual({ file_path: 'notes.md', text: '  keep me \n', max_lines: 3 });
  });

  test('a missing required parameter is "<name> required"', async () => {
    const outcome = await run(call('note', { file_path: '   ', text: 'x' }));
    expect(JSON.parse(text(outcome))).toEqual({ status: 'error', tool: 'note', error: 'file_path required' });
    expect(outcome.details).toEqual({ errorKind: 'InvalidArgs' });
  });

  test('what normalisation cannot fix, the schema still refuses', async () => {
    const outcome = await run(call('note', { file_path: 'a', text: 'x', max_lines: 'many' }));
    expect(JSON.parse(text(outcome)).error).toMatch(/invalid arguments.*max_lines/s);
  });
});

describe('hooks', () => {
  test('before_tool_call sees validated params with defaults; after_tool_call observes the result', async () => {
    const before: unknown[] = [];
    const after: AfterToolCallEvent[] = [];
    const input = call('note', { file_path: 'a.md', text: 'hi' });
    await run(input, [
      {
        beforeToolCall: (event) => void before.push(event),
        afterToolCall: (event) => void after.push(event),
      },
    ]);
    expect(before).toEqual([
      {
        toolName: 'note',
        toolCallId: input.toolCallId,
        conversationId: 'c1',
        params: { file_path: 'a.md', text: 'hi', max_lines: 10 },
      },
    ]);
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ toolName: 'note', isError: false, params: { file_path: 'a.md' } });
    expect(after[0]!.result.details).toEqual({ wrote: 'a.md', secret: 'sk-123' });
    expect(after[0]!.durationMs).toBeGreaterThanOrEqual(0);
  });

  test('a block never runs the tool; the model reads the blocked envelope', async () => {
    const input = call('note', { file_path: 'a.md', text: 'hi' });
    const outcome = await run(input, [
      { beforeToolCall: () => ({ block: true, blockReason: 'Tool blocked by policy: no notes on Fridays' }) },
      { beforeToolCall: () => ({ block: false }) },
    ]);
    expect(seen.has(input.toolCallId)).toBe(false);
    expect(outcome.isError).toBe(true);
    expect(JSON.parse(text(outcome))).toEqual({
      status: 'blocked',
      tool: 'note',
      reason: 'Tool blocked by policy: no notes on Fridays',
    });
    expect(outcome).toMatchObject({
      status: 'blocked',
      blockedBy: 'hook',
      reason: 'Tool blocked by policy: no notes on Fridays',
    });
  });

  test('rewritten params chain from hook to hook and are validated again', async () => {
    const input = call('note', { file_path: 'a.md', text: 'hi' });
    await run(input, [
      {
        beforeToolCall: ({ params }) => ({
          params: { ...params, file_path: `safe/${String(params.file_path)}` },
        }),
      },
      { beforeToolCall: ({ params }) => ({ params: { ...params, text: `${String(params.text)}!` } }) },
    ]);
    expect(seen.get(input.toolCallId)).toEqual({ file_path: 'safe/a.md', text: 'hi!', max_lines: 10 });

    const invalid = await run(call('note', { file_path: 'a.md', text: 'hi' }), [
      { beforeToolCall: () => ({ params: { file_path: 'a.md' } }) },
    ]);
    expect(JSON.parse(text(invalid)).error).toMatch(/before_tool_call hook gave invalid arguments.*text/s);
  });

  test('a before_tool_call hook that throws keeps the tool from running (fail closed)', async () => {
    const input = call('note', { file_path: 'a.md', text: 'hi' });
    const outcome = await run(input, [
      {
        beforeToolCall: () => {
          throw new Error('policy service down');
        },
      },
    ]);
    expect(seen.has(input.toolCallId)).toBe(false);
    expect(JSON.parse(text(outcome)).error).toBe(
      'a before_tool_call hook failed, so the tool did not run: policy service down',
    );
  });

  test('an after_tool_call hook that throws changes nothing', async () => {
    const outcome = await run(call('note', { file_path: 'a.md', text: 'hi' }), [
      {
        afterToolCall: () => {
          throw new Error('audit log full');
        },
      },
    ]);
    expect(outcome.isError).toBe(false);
  });

  test('tool_result_persist rewrites what enters the transcript, errors included', async () => {
    const redact: ToolHooks = {
      toolResultPersist: ({ result }) => ({
        content: result.content.map((block) =>
          block.type === 'text' ? { ...block, text: block.text.replaceAll('sk-123', '[redacted]') } : block,
        ),
        details: { redacted: true },
      }),
    };
    const outcome = await run(call('note', { file_path: 'a.md', text: 'hi' }), [redact]);
    expect(text(outcome)).toContain('[redacted]');
    expect(text(outcome)).not.toContain('sk-123');
    expect(outcome).toMatchObject({ isError: false, details: { redacted: true } });

    const error = await run(call('note', { text: 'hi' }), [
      {
        toolResultPersist: ({ isError }) => ({ content: [{ type: 'text', text: `error seen: ${isError}` }] }),
      },
    ]);
    expect(error).toMatchObject({ isError: true, content: [{ type: 'text', text: 'error seen: true' }] });
    // The fields outlive a rewrite of the text and details.
    expect(error).toMatchObject({ status: 'error', errorKind: 'InvalidArgs' });
  });

  test('a rewritten refusal keeps its status and blocker, not a reason the model no longer reads', async () => {
    const outcome = await run(call('note', { file_path: 'a.md', text: 'hi' }), [
      {
        beforeToolCall: () => ({ block: true, blockReason: 'secret project X' }),
        toolResultPersist: () => ({ content: [{ type: 'text', text: 'blocked' }] }),
      },
    ]);
    expect(outcome).toMatchObject({
      status: 'blocked',
      blockedBy: 'hook',
      content: [{ type: 'text', text: 'blocked' }],
    });
    expect(outcome.reason).toBeUndefined();
  });

  test('a tool_result_persist hook that throws replaces the result instead of recording it unredacted', async () => {
    const outcome = await run(call('note', { file_path: 'a.md', text: 'hi' }), [
      {
        toolResultPersist: () => {
          throw new Error('redactor crashed');
        },
      },
    ]);
    expect(outcome.isError).toBe(true);
    expect(text(outcome)).not.toContain('sk-123');
    expect(JSON.parse(text(outcome)).error).toMatch(/tool_result_persist hook failed.*redactor crashed/);
  });
});

describe('error kinds: retried only when retryable and the tool is read-only', () => {
  test.each<[ToolErrorKind, boolean]>([
    ['NotFound', false],
    ['InvalidArgs', false],
    ['PermissionDenied', false],
    ['FileNotFound', false],
    ['InvalidPath', false],
    ['ExecutionFailed', true],
    ['Timeout', true],
  ])('%s: retried %s', async (kind, retried) => {
    const attempt = run(call('fails_read_only', { kind }), [], 1);
    if (retried) {
      const failure = await attempt.then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(ApplicationFailure);
      expect(failure).toMatchObject({ type: kind, nonRetryable: false, message: `failed with ${kind}` });
    } else {
      expect(await attempt).toMatchObject({
        isError: true,
        status: 'error',
        errorKind: kind,
        details: { errorKind: kind },
      });
    }
  });

  test("the last attempt's error is the answer", async () => {
    const outcome = await run(call('fails_read_only', { kind: 'ExecutionFailed' }), [], 3);
    expect(JSON.parse(text(outcome))).toEqual({
      status: 'error',
      tool: 'fails_read_only',
      error: 'failed with ExecutionFailed',
    });
  });

  test("an MCP tool's error result is its answer on the first attempt, never retried", async () => {
    const outcome = await run(call('mcp_denies', {}), [], 1);
    expect(outcome).toMatchObject({ isError: true, details: { errorKind: 'ExecutionFailed' } });
    expect(JSON.parse(text(outcome)).error).toBe('permission denied: /srv');
  });

  test('a tool with side effects is never retried, whatever the kind', async () => {
    for (const kind of ['ExecutionFailed', 'Timeout'] as const) {
      expect(await run(call('fails_with_effects', { kind }), [], 1)).toMatchObject({
        isError: true,
        details: { errorKind: kind },
      });
    }
  });
});

test('jsonResult: pretty JSON for the model, the payload as details', () => {
  expect(jsonResult({ a: 1, b: ['x'] })).toEqual({
    content: [{ type: 'text', text: '{\n  "a": 1,\n  "b": [\n    "x"\n  ]\n}' }],
    details: { a: 1, b: ['x'] },
  });
  expect(jsonResult(undefined).content).toEqual([{ type: 'text', text: 'null' }]);
  expect(textResult('t', 1)).toEqual({ content: [{ type: 'text', text: 't' }], details: 1 });
});

describe('metrics and the circuit breaker read the outcome fields', () => {
  /** A meter that keeps what was recorded as `name outcome-or-value`. */
  function recordingMeter() {
    const seen: string[] = [];
    const meter = {
      createCounter: (name: string) => ({
        add: (_value: number, tags: Record<string, string> = {}) =>
          seen.push(`${name} ${tags.outcome ?? ''}`.trim()),
      }),
      createHistogram: () => ({ record: () => undefined }),
      createGauge: (name: string) => ({ set: (value: number) => seen.push(`${name} ${value}`) }),
      withTags: () => meter,
    };
    return { meter: meter as unknown as MetricMeter, seen };
  }

  test('each call is counted by its status, an open circuit as unavailable; the gauge follows the circuit', async () => {
    const { meter, seen } = recordingMeter();
    const runTool = createRunTool({
      tools: registry,
      defaultWorkspace: workspace,
      hooks: [
        { beforeToolCall: ({ toolName }) => (toolName === 'mcp_denies' ? { block: true } : undefined) },
      ],
      circuitBreakers: new ToolCircuitBreakers({ failureThreshold: 1, coolDownMs: 60_000 }),
    });
    const env = new MockActivityEnvironment(
      { heartbeatTimeoutMs: 10_000 },
      { logger: new DefaultLogger('ERROR', () => {}), metricMeter: meter },
    );
    const runOne = (input: ToolRunInput) => env.run(runTool, input) as Promise<ToolOutcome>;
    expect(await runOne(call('note', { file_path: 'a.md', text: 'hi' }))).toMatchObject({ status: 'ok' });
    expect(await runOne(call('mcp_denies', {}))).toMatchObject({ status: 'blocked', blockedBy: 'hook' });
    expect(await runOne(call('fails_with_effects', { kind: 'ExecutionFailed' }))).toMatchObject({
      status: 'error',
      errorKind: 'ExecutionFailed',
    });
    const refused = await runOne(call('fails_with_effects', { kind: 'ExecutionFailed' }));
    expect(refused).toMatchObject({ status: 'error', errorKind: 'Unavailable', retryAt: expect.any(String) });
    expect(JSON.parse(text(refused)).error).toContain('(last: failed with ExecutionFailed)');
    expect(seen.filter((line) => line.startsWith(METRIC.toolCalls))).toEqual([
      `${METRIC.toolCalls} ok`,
      `${METRIC.toolCalls} blocked`,
      `${METRIC.toolCalls} error`,
      `${METRIC.toolCalls} unavailable`,
    ]);
    expect(seen.filter((line) => line.startsWith('durable_agent_tool_circuit'))).toEqual([
      `${METRIC.toolCircuitState} 1`,
      METRIC.toolCircuitOpened,
    ]);
  });
});

describe('a call stopped by its timeout', () => {
  /** Runs `wait_until_stopped` in a new environment and times it out once it has started. */
  async function timedOut(runTool: ReturnType<typeof createRunTool>, isLocal: boolean) {
    const env = new MockActivityEnvironment(
      { heartbeatTimeoutMs: 10_000, isLocal },
      { logger: new DefaultLogger('ERROR', () => {}) },
    );
    const before = waitStarts;
    const running = env.run(runTool, call('wait_until_stopped', {})) as Promise<ToolOutcome>;
    let done = false;
    const settled = running.then(
      (outcome) => outcome,
      (error: unknown) => error,
    );
    void settled.finally(() => (done = true));
    // A call refused before it starts (an open circuit) settles without being stopped.
    while (waitStarts === before && !done) await new Promise((resolve) => setTimeout(resolve, 1));
    env.cancel('TIMED_OUT', new ActivityCancellationDetails({ timedOut: true }));
    return settled;
  }

  test('as a local attempt (handed to an activity next) does not count against its tool', async () => {
    const runTool = createRunTool({
      tools: registry,
      defaultWorkspace: workspace,
      circuitBreakers: new ToolCircuitBreakers({ failureThreshold: 1, coolDownMs: 60_000 }),
    });
    const starts = waitStarts;
    for (let i = 0; i < 3; i++) await timedOut(runTool, true);
    expect(waitStarts - starts).toBe(3);
  });

  test('as an activity counts against its tool: the breaker opens', async () => {
    const runTool = createRunTool({
      tools: registry,
      defaultWorkspace: workspace,
      circuitBreakers: new ToolCircuitBreakers({ failureThreshold: 1, coolDownMs: 60_000 }),
    });
    await timedOut(runTool, false);
    const refused = await run(call('wait_until_stopped', {}), [], 1, runTool);
    expect(refused).toMatchObject({ status: 'error', errorKind: 'Unavailable' });
    expect(JSON.parse(text(refused)).error).toContain('(last: timed out)');
  });
});
