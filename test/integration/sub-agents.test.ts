import { randomUUID } from 'node:crypto';
import { abortUpdate, eventsQuery } from '../../src/shared/conversation-api';
import type { AgentEvent } from '../../src/shared/events';
import { subAgentId } from '../../src/shared/sub-agents';
import type { ChatRequest } from '../support/scripted-model';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { tickerAborts, tickerTool } from '../support/test-tools';
import { waitFor } from '../support/test-worker';
import { waitForEvent } from '../support/wait-for-event';

const harness = useNockedHarness([tickerTool]);

test('sessions_spawn runs a sub-agent as a child conversation; its answer is the tool result', async () => {
  let childRequest: ChatRequest | undefined;
  let parentFollowUp: ChatRequest | undefined;
  nockModel([
    {
      toolCalls: [
        { id: 'call_spawn', name: 'sessions_spawn', arguments: { task: 'Count the letters in "temporal"' } },
      ],
    },
    (request) => {
      childRequest = request;
      return { text: 'It has 8 letters.' };
    },
    (request) => {
      parentFollowUp = request;
      return { text: 'The sub-agent says 8.' };
    },
  ]);
  const id = `conv-${randomUUID()}`;
  const handle = harness().client.workflow.getHandle(id);
  const sent = await harness().agent.send(id, 'Delegate the counting');
  // A watcher of the parent sees the sub-agent's own events as progress of the spawn call.
  const seen: AgentEvent[] = [];
  for await (const event of harness().agent.watch(id, {
    afterSeq: sent.afterSeq,
    until: (event) => event.type === 'run_finished',
  }))
    seen.push(event);
  expect(seen.at(-1)).toMatchObject({ type: 'run_finished', answer: 'The sub-agent says 8.' });
  const childProgress = seen.filter(
    (event) => event.type === 'tool_execution_update' && event.toolCallId === 'call_spawn',
  );
  expect(childProgress.map((event) => event.type === 'tool_execution_update' && event.text)).toEqual(
    expect.arrayContaining([expect.stringMatching(/\.sub-call_spawn\] /)]),
  );

  const started = await waitForEvent(handle, 'subagent_started');
  const childId = subAgentId(id, 'call_spawn');
  expect(started).toMatchObject({ conversationId: childId, task: 'Count the letters in "temporal"' });
  expect(childRequest!.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
    'Count the letters in "temporal"',
  ]);
  expect(parentFollowUp!.messages.find((m) => m.role === 'tool')?.content).toBe('It has 8 letters.');
  const child = harness().client.workflow.getHandle(childId);
  expect(await child.result()).toMatchObject({
    endedBy: 'first_run',
    outcome: 'answered',
    answer: 'It has 8 letters.',
  });
  const description = await child.describe();
  expect(description.raw.workflowExecutionInfo?.parentExecution?.workflowId).toBe(id);
});

test('aborting the parent cancels its sub-agent and the sub-agent’s tools', async () => {
  nockModel([
    {
      toolCalls: [
        { id: 'call_spawn_long', name: 'sessions_spawn', arguments: { task: 'Tick for a long time' } },
      ],
    },
    { toolCalls: [{ id: 'call_child_tick', name: 'ticker', arguments: { ticks: 600 } }] },
  ]);
  const id = `conv-${randomUUID()}`;
  const handle = harness().client.workflow.getHandle(id);
  await harness().agent.send(id, 'Delegate something slow');
  const childId = subAgentId(id, 'call_spawn_long');
  const child = harness().client.workflow.getHandle(childId);
  await waitFor(async () => {
    const events = await child.query(eventsQuery, 0).catch(() => []);
    return events.some((event) => event.type === 'tool_execution_start') || undefined;
  }, 'the sub-agent to start its tool');

  await handle.executeUpdate(abortUpdate, { args: [{ reason: 'enough', by: 'ops' }] });
  expect(await waitForEvent(handle, 'run_finished')).toMatchObject({ outcome: 'aborted' });
  expect(await waitForEvent(handle, 'aborted')).toMatchObject({ interrupted: ['call_spawn_long'] });
  expect((await child.describe()).status.name).toBe('CANCELLED');
  expect(tickerAborts.has('call_child_tick')).toBe(true);
});
