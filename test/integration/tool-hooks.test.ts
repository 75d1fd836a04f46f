import { randomUUID } from 'node:crypto';
import type { AfterToolCallEvent, ToolHooks } from '../../src/tools/tool-hooks';
import { ask } from '../support/ask';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import type { ChatRequest } from '../support/scripted-model';
import { echoTool, recordTool, recorded } from '../support/test-tools';

const observed: AfterToolCallEvent[] = [];

/** What an embedder registers: a policy that blocks, a rewrite, an audit trail and a redaction. */
const hooks: ToolHooks[] = [
  {
    beforeToolCall({ toolName, params }) {
      if (toolName === 'record' && String(params.value).includes('forbidden')) {
        return { block: true, blockReason: 'Tool blocked by policy: forbidden values are not recorded' };
      }
      if (toolName === 'echo') return { params: { ...params, text: `${String(params.text)} (checked)` } };
      return undefined;
    },
    afterToolCall(event) {
      observed.push(event);
    },
  },
  {
    toolResultPersist({ result }) {
      return JSON.parse(JSON.stringify(result).replaceAll('s3cret', '[redacted]')) as typeof result;
    },
  },
];

const harness = useNockedHarness([echoTool, recordTool], { hooks, toolPolicy: { deny: ['exec'] } });

const toolResults = (request: ChatRequest | undefined) =>
  Object.fromEntries(
    (request?.messages ?? [])
      .filter((m) => m.role === 'tool')
      .map((m) => [m.tool_call_id, m.content as string]),
  );

test('a blocking hook keeps the call from running and the model reads why; other hooks rewrite and observe', async () => {
  const script = nockModel([
    {
      toolCalls: [
        { id: 'call_blocked', name: 'record', arguments: { value: 'forbidden thing' } },
        { id: 'call_allowed', name: 'record', arguments: { value: 'fine thing' } },
        { id: 'call_echo', name: 'echo', arguments: { text: 'my s3cret' } },
      ],
    },
    { text: 'Two of three.' },
  ]);
  const id = `conv-${randomUUID()}`;
  const { finished } = await ask(harness().agent, id, 'Record both', {
    options: { approval: { mode: 'auto' } },
  });
  expect(finished).toMatchObject({ outcome: 'answered', answer: 'Two of three.' });

  const results = toolResults(script.requests[1]);
  expect(JSON.parse(results.call_blocked!)).toEqual({
    status: 'blocked',
    tool: 'record',
    reason: 'Tool blocked by policy: forbidden values are not recorded',
  });
  expect(recorded.has('call_blocked')).toBe(false);
  expect(results.call_allowed).toBe('recorded fine thing');
  expect(recorded.get('call_allowed')).toBe('fine thing');
  // Rewritten by before_tool_call, then redacted by tool_result_persist before it entered the transcript.
  expect(results.call_echo).toBe('echo: my [redacted] (checked)');

  const transcript = (await harness().agent.state(id)).transcript;
  const blocked = transcript.find((m) => m.role === 'toolResult' && m.toolCallId === 'call_blocked');
  expect(blocked).toMatchObject({ isError: true, details: { blocked: true } });
  const echoed = transcript.find((m) => m.role === 'toolResult' && m.toolCallId === 'call_echo');
  expect(echoed).toMatchObject({ details: { text: 'my [redacted] (checked)' } });

  // after_tool_call saw the calls that ran, with the tool's own result, and not the blocked one.
  const forThisRun = observed.filter((event) => event.conversationId === id);
  expect(forThisRun.map((event) => event.toolCallId).sort()).toEqual(['call_allowed', 'call_echo']);
  const echo = forThisRun.find((event) => event.toolCallId === 'call_echo')!;
  expect(echo).toMatchObject({ toolName: 'echo', isError: false, params: { text: 'my s3cret (checked)' } });
  expect(echo.result.content).toEqual([{ type: 'text', text: 'echo: my s3cret (checked)' }]);
  expect(echo.durationMs).toBeGreaterThanOrEqual(0);
});

test("the worker's own policy removes a tool from every conversation", async () => {
  const script = nockModel([
    { toolCalls: [{ id: 'call_exec', name: 'exec', arguments: { command: 'echo hi' } }] },
    { text: 'No shell here.' },
  ]);
  const { finished, seen } = await ask(harness().agent, `conv-${randomUUID()}`, 'Run it', {
    options: { allow: ['exec', 'echo'], approval: { mode: 'auto' } },
  });
  expect(finished.answer).toBe('No shell here.');
  const warnings = seen.flatMap((event) => (event.type === 'warning' ? [event.message] : []));
  expect(warnings).toEqual(['tool policy (conversation): "exec" in allow is not available on this worker']);
  expect((script.requests[0]!.tools ?? []).map((tool) => tool.function.name)).toEqual(['echo']);
  expect(JSON.parse(toolResults(script.requests[1]).call_exec!)).toMatchObject({
    status: 'error',
    error: 'Tool not found: exec. Available tools: echo',
  });
});
