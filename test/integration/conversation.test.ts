import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ask } from '../support/ask';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { echoTool, stallTool } from '../support/test-tools';

const harness = useNockedHarness([echoTool, stallTool]);

const newId = () => `conv-${randomUUID()}`;

async function historyEvents(conversationId: string) {
  const history = await harness().client.workflow.getHandle(conversationId).fetchHistory();
  return history.events ?? [];
}

test('two turns with parallel tool calls: results reach the model in call order', async () => {
  await writeFile(path.join(harness().workspace, 'notes.txt'), 'line one\nline two\n');
  const script = nockModel([
    {
      text: 'Let me look.',
      toolCalls: [
        { id: 'call_slow', name: 'echo', arguments: { text: 'slow', delayMs: 800 } },
        { id: 'call_fast', name: 'echo', arguments: { text: 'fast' } },
        { id: 'call_read', name: 'read', arguments: { path: 'notes.txt' } },
      ],
    },
    { text: 'First answer.' },
    { text: 'Second answer.' },
  ]);
  const id = newId();

  const first = await ask(harness().agent, id, 'What is in notes.txt?');
  expect(first.finished).toMatchObject({ outcome: 'answered', answer: 'First answer.' });
  const second = await ask(harness().agent, id, 'And again?');
  expect(second.finished).toMatchObject({ outcome: 'answered', answer: 'Second answer.' });

  const toolMessages = script.requests[1]!.messages.filter((message) => message.role === 'tool');
  expect(toolMessages.map((message) => message.tool_call_id)).toEqual([
    'call_slow',
    'call_fast',
    'call_read',
  ]);
  expect(toolMessages.map((message) => message.content)).toEqual([
    'echo: slow',
    'echo: fast',
    'line one\nline two\n',
  ]);
  expect(script.requests[0]!.tools!.map((tool) => tool.function.name)).toEqual(
    [...script.requests[0]!.tools!.map((tool) => tool.function.name)].sort(),
  );
  // The third request carries the whole conversation after the default system prompt: both user
  // turns, the tool round, both answers.
  expect(script.requests[2]!.messages.map((message) => message.role)).toEqual([
    'system',
    'user',
    'assistant',
    'tool',
    'tool',
    'tool',
    'assistant',
    'user',
  ]);
  expect(script.exhausted).toBe(false);

  const state = await harness().agent.state(id);
  expect(state.status).toBe('idle');
  expect(state.transcript.map((message) => message.role)).toEqual([
    'user',
    'assistant',
    'toolResult',
    'toolResult',
    'toolResult',
    'assistant',
    'user',
    'assistant',
  ]);

  // All three tools started in one workflow task, before any of them completed: the echoes as
  // activities, and the read (a short read-only tool) as a local activity recorded by that task.
  const events = await historyEvents(id);
  // Beside the read: admission, and each run's system prompt, all local activities too.
  const localRead = events.filter(
    (event) =>
      event.markerRecordedEventAttributes?.markerName === 'core_local_activity' &&
      Buffer.from(event.userMetadata?.summary?.data ?? []).toString() === '"read notes.txt"',
  );
  expect(localRead).toHaveLength(1);
  const toolTask = String(localRead[0]!.markerRecordedEventAttributes!.workflowTaskCompletedEventId);
  const runTools = events.filter(
    (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'runTool',
  );
  const scheduled = runTools.filter(
    (event) => String(event.activityTaskScheduledEventAttributes!.workflowTaskCompletedEventId) === toolTask,
  );
  expect(scheduled).toHaveLength(2);
  // On a loaded machine a cold read can pass its 100 ms in the workflow task: it is then handed,
  // one timer later, to an activity, the only other runTool of the run.
  const handedOver = runTools.length - scheduled.length;
  expect(handedOver).toBeLessThanOrEqual(1);
  if (handedOver === 1) expect(events.some((event) => event.timerStartedEventAttributes)).toBe(true);
  const toolScheduledIds = new Set(scheduled.map((event) => String(event.eventId)));
  const firstToolCompletion = events.find((event) =>
    toolScheduledIds.has(String(event.activityTaskCompletedEventAttributes?.scheduledEventId ?? '')),
  )!;
  expect(Math.max(...[...toolScheduledIds].map(Number))).toBeLessThan(Number(firstToolCompletion.eventId));
  const activityTypes = events.flatMap(
    (event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? [],
  );
  expect(activityTypes.filter((name) => name === 'callModel')).toHaveLength(3);
  expect(activityTypes.filter((name) => name === 'listTools')).toHaveLength(1);
});

test('maxToolIterations ends the run with an error event, and the conversation goes on', async () => {
  const loop = { toolCalls: [{ name: 'echo', arguments: { text: 'again' } }] };
  const script = nockModel([loop, loop, { text: 'Recovered.' }]);
  const id = newId();

  const { finished, seen } = await ask(harness().agent, id, 'Loop forever', {
    options: { maxToolIterations: 2 },
  });
  expect(finished.outcome).toBe('max_tool_iterations');
  const errors = seen.flatMap((event) => (event.type === 'error' ? [event.message] : []));
  expect(errors).toEqual(['max tool iterations (2) exceeded']);
  expect(script.requests).toHaveLength(2);

  const next = await ask(harness().agent, id, 'Stop now');
  expect(next.finished).toMatchObject({ outcome: 'answered', answer: 'Recovered.' });
  expect((await harness().agent.state(id)).status).toBe('idle');
});

test('an unknown tool, invalid arguments and malformed JSON reach the model as error results', async () => {
  const script = nockModel([
    {
      toolCalls: [
        { id: 'call_unknown', name: 'teleport', arguments: {} },
        // A number for a string would be coerced; a word for a number cannot be.
        { id: 'call_invalid', name: 'echo', arguments: { text: 'hi', delayMs: 'soon' } },
        { id: 'call_malformed', name: 'echo', arguments: '{"text": "unterminated' },
        { id: 'call_fine', name: 'echo', arguments: { text: 'ok' } },
      ],
    },
    { text: 'Understood.' },
  ]);
  const { finished } = await ask(harness().agent, newId(), 'Try some tools');
  expect(finished).toMatchObject({ outcome: 'answered', answer: 'Understood.' });

  const results = Object.fromEntries(
    script.requests[1]!.messages.filter((m) => m.role === 'tool').map((m) => [
      m.tool_call_id,
      m.content as string,
    ]),
  );
  expect(JSON.parse(results.call_unknown!)).toMatchObject({ status: 'error', tool: 'teleport' });
  expect(JSON.parse(results.call_unknown!).error).toContain('Tool not found: teleport');
  expect(JSON.parse(results.call_invalid!)).toMatchObject({ status: 'error', tool: 'echo' });
  expect(JSON.parse(results.call_invalid!).error).toMatch(/invalid arguments.*delayMs/s);
  expect(JSON.parse(results.call_malformed!).error).toContain('not valid JSON');
  expect(results.call_fine).toBe('echo: ok');
});

test('a tool that exceeds its timeout becomes a timeout error result', async () => {
  const script = nockModel([
    { toolCalls: [{ id: 'call_stall', name: 'stall', arguments: {} }] },
    { text: 'It timed out.' },
  ]);
  const id = newId();
  const { finished } = await ask(harness().agent, id, 'Stall please');
  expect(finished.answer).toBe('It timed out.');
  const result = script.requests[1]!.messages.find((m) => m.tool_call_id === 'call_stall')!;
  expect(JSON.parse(result.content as string)).toMatchObject({ status: 'error', tool: 'stall' });
  expect(result.content).toContain('did not finish within its 1s timeout');
  const transcript = (await harness().agent.state(id)).transcript;
  expect(transcript.find((m) => m.role === 'toolResult')).toMatchObject({
    isError: true,
    details: { errorKind: 'Timeout' },
  });
});

test('a retryable model error (503) is retried by Temporal and the run answers', async () => {
  const script = nockModel([{ status: 503, error: 'overloaded' }, { text: 'Back online.' }]);
  const id = newId();
  const { finished } = await ask(harness().agent, id, 'Hello?');
  expect(finished).toMatchObject({ outcome: 'answered', answer: 'Back online.' });
  expect(script.requests).toHaveLength(2);
  const events = await historyEvents(id);
  const modelStarts = events.filter((event) => event.activityTaskStartedEventAttributes);
  expect(modelStarts.some((event) => event.activityTaskStartedEventAttributes!.attempt === 2)).toBe(true);
});

test('a non-retryable model error (401) ends the run with a clear error, once, and the conversation stays usable', async () => {
  const script = nockModel([{ status: 401, error: 'invalid api key' }, { text: 'Works now.' }]);
  const id = newId();
  const { finished, seen } = await ask(harness().agent, id, 'Hello?');
  expect(finished.outcome).toBe('error');
  const errors = seen.flatMap((event) => (event.type === 'error' ? [event.message] : []));
  expect(errors).toHaveLength(1);
  expect(errors[0]).toMatch(/model call failed: the model endpoint answered 401.*invalid api key/);
  expect(script.requests).toHaveLength(1);

  const retry = await ask(harness().agent, id, 'Hello again');
  expect(retry.finished).toMatchObject({ outcome: 'answered', answer: 'Works now.' });
});
