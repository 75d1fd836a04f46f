import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { disabledTools } from '../../src/cli/terminal/disabled-tools';
import { ToolCircuitBreakers } from '../../src/tools/circuit-breaker';
import { defineTool, textResult } from '../../src/tools/tool';
import { ToolError } from '../../src/tools/tool-error';
import { ask } from '../support/ask';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import type { ChatRequest } from '../support/scripted-model';
import { waitFor } from '../support/test-worker';

let backendUp = false;
let executions = 0;

/** A tool whose backend is down until the test brings it up. */
const inventoryTool = defineTool({
  name: 'inventory',
  label: 'Inventory',
  description: 'Looks up stock.',
  parameters: z.object({ item: z.string() }),
  category: 'other',
  idempotent: false,
  risk: 'low',
  retry: { maximumAttempts: 1 },
  async execute(_id, params) {
    executions++;
    if (!backendUp) throw new ToolError('ExecutionFailed', 'inventory backend refused the connection');
    return textResult(`${params.item}: 12 in stock`);
  },
});

const COOL_DOWN_MS = 1_500;
const breakers = new ToolCircuitBreakers({ failureThreshold: 2, coolDownMs: COOL_DOWN_MS });
const harness = useNockedHarness([inventoryTool], { circuitBreakers: breakers });

const resultOf = (request: ChatRequest | undefined, callId: string) =>
  (request?.messages ?? []).find((m) => m.role === 'tool' && m.tool_call_id === callId)?.content as string;

test('a tool failing twice in a row is disabled on the worker, the model reads why, and it closes again after the cool-down', async () => {
  const call = (id: string) => ({ toolCalls: [{ id, name: 'inventory', arguments: { item: 'bolts' } }] });
  const script = nockModel([
    call('call_1'),
    call('call_2'),
    call('call_3'),
    { text: 'The inventory tool is down for now.' },
    call('call_4'),
    { text: 'Bolts: 12 in stock.' },
  ]);
  const id = `conv-${randomUUID()}`;
  const options = { options: { approval: { mode: 'auto' as const } } };

  const first = await ask(harness().agent, id, 'How many bolts?', options);
  expect(first.finished).toMatchObject({ outcome: 'answered' });
  expect(JSON.parse(resultOf(script.requests[1], 'call_1'))).toMatchObject({
    status: 'error',
    error: 'inventory backend refused the connection',
  });
  // The third call never reached the tool: the circuit opened after the second failure.
  expect(executions).toBe(2);
  const refused = JSON.parse(resultOf(script.requests[3], 'call_3')) as { status: string; error: string };
  expect(refused.status).toBe('error');
  expect(refused.error).toMatch(
    /^inventory is temporarily disabled on this worker until \S+Z \(in [12] s\) after 2 failures in a row \(last: inventory backend refused the connection\); retry after that/,
  );
  expect(breakers.snapshot()).toEqual([
    expect.objectContaining({ tool: 'inventory', state: 'open', consecutiveFailures: 2 }),
  ]);
  const transcript = (await harness().agent.state(id)).transcript;
  expect(transcript.find((m) => m.role === 'toolResult' && m.toolCallId === 'call_3')).toMatchObject({
    isError: true,
    status: 'error',
    errorKind: 'Unavailable',
    retryAt: expect.stringMatching(/Z$/),
    details: { errorKind: 'Unavailable', circuit: { state: 'open' } },
  });
  expect(transcript.find((m) => m.role === 'toolResult' && m.toolCallId === 'call_1')).toMatchObject({
    status: 'error',
    errorKind: 'ExecutionFailed',
  });

  // `status` names the disabled tool and until when, from the conversation's events: asked at a
  // moment of the cool-down (a loaded machine may read the events after its 1.5 s), and not after it.
  const reopensAt = breakers.snapshot()[0]!.retryAtMs!;
  const events = await harness().agent.events(id);
  const disabled = disabledTools(events, reopensAt - 1);
  expect(disabled).toEqual([{ tool: 'inventory', until: expect.stringMatching(/Z$/) }]);
  expect(Date.parse(disabled[0]!.until)).toBe(reopensAt);
  expect(disabledTools(events, reopensAt)).toEqual([]);

  // After the cool-down one trial call runs; it works, so the circuit closes.
  backendUp = true;
  await waitFor(async () => (Date.now() >= reopensAt ? true : undefined), 'the cool-down', 10_000);
  const second = await ask(harness().agent, id, 'And now?', options);
  expect(second.finished).toMatchObject({ outcome: 'answered', answer: 'Bolts: 12 in stock.' });
  expect(resultOf(script.requests[5], 'call_4')).toBe('bolts: 12 in stock');
  expect(executions).toBe(3);
  expect(breakers.snapshot()).toEqual([]);
  expect(disabledTools(await harness().agent.events(id), Date.now())).toEqual([]);
});
