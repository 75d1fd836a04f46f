import { randomUUID } from 'node:crypto';
import { ask, followToEnd } from '../support/ask';
import { ToolRegistry } from '../../src/tools/registry';
import { NOCK_MODEL_URL, nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { echoTool } from '../support/test-tools';
import { startHarness, waitFor } from '../support/test-worker';

const harness = useNockedHarness([echoTool]);

const newId = () => `conv-${randomUUID()}`;

test('messages sent during a run queue as follow-ups and are answered by the next run', async () => {
  const script = nockModel([
    { toolCalls: [{ name: 'echo', arguments: { text: 'working', delayMs: 1_500 } }] },
    { text: 'First done.' },
    (request) => ({
      text: `Follow-ups seen: ${request.messages.filter((m) => m.role === 'user').length - 1}`,
    }),
  ]);
  const id = newId();
  const first = await harness().agent.send(id, 'Start something slow');
  await waitFor(
    async () => ((await harness().agent.state(id)).status === 'running' ? true : undefined),
    'the run to start',
  );
  const second = await harness().agent.send(id, 'Also this');
  const third = await harness().agent.send(id, 'And this');
  expect((await harness().agent.status(id)).queuedMessages).toBe(2);

  const follow = async (sent: typeof first) => (await followToEnd(harness().agent, sent)).finished;
  expect(await follow(first)).toMatchObject({ answer: 'First done.', messageIds: [first.messageId] });
  const followUp = await follow(second);
  expect(followUp).toMatchObject({
    answer: 'Follow-ups seen: 2',
    messageIds: [second.messageId, third.messageId],
  });
  expect(script.requests).toHaveLength(3);
  expect((await harness().agent.state(id)).runCount).toBe(2);
});

test('end closes the conversation after its run, and an ended conversation refuses new messages', async () => {
  nockModel([{ text: 'Hello.' }]);
  const id = newId();
  await ask(harness().agent, id, 'Hi');
  await harness().agent.end(id, 'done');
  const result = await harness().client.workflow.getHandle(id).result();
  expect(result).toEqual({
    runs: 1,
    messages: 2,
    endedBy: 'end',
    outcome: 'answered',
    answer: 'Hello.',
    usage: { tokens: 15, toolCalls: 0 },
  });
  await expect(harness().agent.send(id, 'Are you there?')).rejects.toThrow(/has ended \(completed\)/);
});

test('a conversation ends itself after its idle timeout', async () => {
  nockModel([{ text: 'Hello.' }]);
  const id = newId();
  await ask(harness().agent, id, 'Hi', { options: { idleTimeoutMs: 1_000 } });
  const result = await harness().client.workflow.getHandle(id).result();
  expect(result).toMatchObject({ runs: 1, endedBy: 'idle_timeout' });
});

test('a watcher sees a running tool’s heartbeated progress', async () => {
  nockModel([
    {
      toolCalls: [
        { name: 'exec', arguments: { command: 'for i in 1 2 3 4; do echo step $i; sleep 1; done' } },
      ],
    },
    { text: 'Counted.' },
  ]);
  // exec asks for approval by default; this conversation lets tools run unasked.
  const { finished, seen } = await ask(harness().agent, newId(), 'Count', {
    options: { approval: { mode: 'auto' } },
  });
  expect(finished.answer).toBe('Counted.');
  const progressTexts = seen.flatMap((event) =>
    event.type === 'tool_execution_update' && event.text ? [event.text] : [],
  );
  expect(progressTexts.some((text) => /step \d/.test(text))).toBe(true);
});

test('events carry a bounded preview of long model text; the transcript and the answer keep all of it', async () => {
  const longAnswer = 'word '.repeat(2_000).trim();
  nockModel([{ text: longAnswer }]);
  const id = newId();
  const { finished, seen } = await ask(harness().agent, id, 'Talk a lot');
  expect(finished.answer).toBe(longAnswer);
  const response = seen.find((event) => event.type === 'model_response');
  expect(response?.type === 'model_response' && response.text).toBe(longAnswer.slice(0, 2_000));
  const { transcript } = await harness().agent.state(id);
  expect(transcript[1]).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: longAnswer }] });

  const status = await harness().agent.status(id);
  const events = await harness().agent.events(id);
  expect(status).toEqual({
    status: 'idle',
    agentId: 'default',
    approvalMode: 'default',
    root: id,
    runCount: 1,
    queuedMessages: 0,
    pendingApprovals: 0,
    transcriptGeneration: 0,
    transcriptLength: 2,
    lastSeq: events[events.length - 1]!.seq,
    // Spending is counted with no budget set: the scripted model reports 10 + 5 tokens per call.
    budget: {
      limits: {},
      used: { tokens: 15, toolCalls: 0 },
      run: { run: 1, tokens: 15, toolCalls: 0 },
      startedAt: expect.any(Number),
    },
    lastRun: { run: 1, outcome: 'answered' },
  });
});

test('a worker that cannot list its tools ends the run with an error event, not the conversation', async () => {
  class BrokenRegistry extends ToolRegistry {
    override descriptors(): never {
      throw new Error('tool catalog unavailable');
    }
  }
  const broken = await startHarness({ modelBaseUrl: NOCK_MODEL_URL, registry: new BrokenRegistry([]) });
  try {
    const id = newId();
    const { finished, seen } = await ask(broken.agent, id, 'Hello');
    expect(finished.outcome).toBe('error');
    const errors = seen.flatMap((event) => (event.type === 'error' ? [event.message] : []));
    expect(errors).toEqual([
      expect.stringContaining("could not list the worker's tools: tool catalog unavailable"),
    ]);
    expect((await broken.agent.status(id)).status).toBe('idle');
  } finally {
    await broken.close();
  }
}, 120_000);
