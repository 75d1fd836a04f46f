import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { z } from 'zod';
import { steerUpdate } from '../../src/shared/conversation-api';
import { type ToolResult, defineTool, textResult } from '../../src/tools/tool';
import type { ChatRequest } from '../support/scripted-model';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { waitFor } from '../support/test-worker';
import { eventsOf, waitForEvent } from '../support/wait-for-event';

/** Per tool call: whether the SDK had delivered the cancel request when the tool saw its signal fire. */
const sdkCancelledWhenStopped = new Map<string, boolean>();
const running = new Set<string>();

/** Resolves when `signal` fires, or after `ms` (so nothing outlives a failed test for long). */
function untilAborted(signal: AbortSignal, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** A tool that waits until it is stopped, notes whether the SDK had the cancel request by then, then `ends`. */
function stoppableTool(name: string, heartbeatTimeoutMs: number, ends: (signal: AbortSignal) => ToolResult) {
  return defineTool({
    name,
    label: name,
    description: 'Waits until it is stopped.',
    parameters: z.object({}),
    category: 'other',
    idempotent: true,
    risk: 'low',
    heartbeatTimeoutMs,
    async execute(toolCallId, _params, signal) {
      const context = Context.current();
      running.add(toolCallId);
      await untilAborted(signal, 90_000);
      sdkCancelledWhenStopped.set(toolCallId, context.cancellationSignal.aborted);
      return ends(signal);
    },
  });
}

// A heartbeat timeout that leaves the SDK a minute between heartbeats.
const patientTool = stoppableTool('patient', 120_000, (signal) =>
  textResult(signal.aborted ? 'stopped early' : 'waited it out'),
);
// Throws when stopped instead of returning what it has.
const throwingTool = stoppableTool('throwing', 2_000, () => {
  throw new Error('interrupted half way');
});

// Heartbeats reach the server at most once a minute: a cancel request brought by one would take that long.
const harness = useNockedHarness([patientTool, throwingTool], { heartbeatThrottleMs: 60_000 });

const shapeOf = (request: ChatRequest) =>
  request.messages.map((message) => `${message.role}: ${message.content ?? ''}`);

async function steerDuring(tool: string): Promise<{ callId: string; secondRequest: ChatRequest }> {
  const callId = `call_${randomUUID()}`;
  let secondRequest: ChatRequest | undefined;
  nockModel([
    { toolCalls: [{ id: callId, name: tool, arguments: {} }] },
    (request) => {
      secondRequest = request;
      return { text: 'Stopped.' };
    },
  ]);
  const id = `conv-${randomUUID()}`;
  await harness().agent.send(id, `Run ${tool}`);
  const handle = harness().client.workflow.getHandle(id);
  await waitFor(async () => running.has(callId) || undefined, `the ${tool} tool running`);
  await handle.executeUpdate(steerUpdate, {
    args: [{ text: 'Stop now', messageId: `steer-${randomUUID()}` }],
  });
  expect(await waitForEvent(handle, 'run_finished')).toMatchObject({
    outcome: 'answered',
    answer: 'Stopped.',
  });
  const events = await eventsOf(handle);
  expect(events.find((event) => event.type === 'tool_execution_end')).toMatchObject({ aborted: true });
  return { callId, secondRequest: secondRequest! };
}

test('a steer stops a tool running in the workflow’s own worker before any heartbeat brings it', async () => {
  const { callId, secondRequest } = await steerDuring('patient');
  // The worker heard it from its own workflow (and the server had recorded it), not from the SDK.
  expect(sdkCancelledWhenStopped.get(callId)).toBe(false);
  expect(shapeOf(secondRequest).slice(-2)).toEqual([
    expect.stringMatching(/^tool: stopped early\n\[interrupted before it finished/),
    'user: Stop now',
  ]);
}, 30_000);

test('a tool that throws when stopped that way is still reported cancelled, once the SDK has the request', async () => {
  const { callId, secondRequest } = await steerDuring('throwing');
  expect(sdkCancelledWhenStopped.get(callId)).toBe(false);
  expect(shapeOf(secondRequest).slice(-2)).toEqual([
    expect.stringContaining('"status":"aborted"'),
    'user: Stop now',
  ]);
}, 30_000);
