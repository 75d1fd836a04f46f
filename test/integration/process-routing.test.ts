import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import nock from 'nock';
import { workerBoundTaskQueue } from '../../src/shared/worker-bound';
import { builtinTools } from '../../src/tools/builtin/builtin-tools';
import { MemoryStore } from '../../src/tools/builtin/memory-store';
import { BackgroundProcesses } from '../../src/tools/exec/background-processes';
import { ToolRegistry } from '../../src/tools/registry';
import { ask } from '../support/ask';
import { NOCK_MODEL_URL, nockModel } from '../support/nock-model';
import { type ChatRequest, toolResultIn } from '../support/scripted-model';
import { type TestHarness, startHarness } from '../support/test-worker';

const toolResult = toolResultIn;

const POLLS = 6;
let workers: Array<{ harness: TestHarness; processes: BackgroundProcesses; closed: boolean }> = [];

beforeAll(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1|localhost/);
  const taskQueue = `test-${randomUUID()}`;
  // Two workers on one task queue, each with its own table of background processes.
  workers = await Promise.all(
    [0, 1].map(async () => {
      const processes = new BackgroundProcesses();
      const memory = new MemoryStore(await mkdtemp(path.join(os.tmpdir(), 'durable-agent-memory-')));
      const registry = new ToolRegistry(builtinTools({ memory, runtime: { processes } }));
      const harness = await startHarness({ modelBaseUrl: NOCK_MODEL_URL, taskQueue, registry });
      return { harness, processes, closed: false };
    }),
  );
});

afterAll(async () => {
  await Promise.all(workers.filter((worker) => !worker.closed).map((worker) => worker.harness.close()));
  for (const worker of workers) worker.processes.killAll();
  nock.cleanAll();
  nock.enableNetConnect();
});

test('with two workers on the task queue, every call naming a background process reaches the worker holding it; once that worker is gone the model is told so', async () => {
  let processId = '';
  const polls = Array.from({ length: POLLS }, (_, index) => () => ({
    toolCalls: [{ id: `call_poll_${index}`, name: 'process', arguments: { action: 'poll', id: processId } }],
  }));
  const script = nockModel([
    {
      toolCalls: [
        {
          id: 'call_start',
          name: 'exec',
          arguments: { command: 'echo started; sleep 60', background: true },
        },
      ],
    },
    (request: ChatRequest) => {
      processId = /started background process (\S+) /.exec(toolResult(request, 'call_start'))![1]!;
      return polls[0]!();
    },
    ...polls.slice(1),
    { text: 'Polled it.' },
  ]);
  const conversationId = `conv-${randomUUID()}`;
  const { finished } = await ask(workers[0]!.harness.agent, conversationId, 'Start and poll', {
    options: { approval: { mode: 'auto' } },
  });
  expect(finished).toMatchObject({ outcome: 'answered', answer: 'Polled it.' });

  const owner = workers.find((worker) => processId.endsWith(`-${worker.processes.instance}`))!;
  const survivor = workers.find((worker) => worker !== owner)!;
  expect(owner).toBeDefined();
  // Each poll found the process: none landed on the other worker.
  for (let index = 0; index < POLLS; index++) {
    expect(toolResult(script.requests[index + 2]!, `call_poll_${index}`)).toMatch(
      new RegExp(`^${processId}: running \\(pid \\d+, \\d+s\\)`),
    );
  }
  // And the history shows where they were sent: the owner's own queue.
  const ownQueue = workerBoundTaskQueue(owner.harness.taskQueue, owner.processes.instance);
  const history = await owner.harness.client.workflow.getHandle(conversationId).fetchHistory();
  const queues = (history.events ?? []).flatMap((event) =>
    event.activityTaskScheduledEventAttributes
      ? [event.activityTaskScheduledEventAttributes.taskQueue?.name]
      : [],
  );
  expect(queues.filter((queue) => queue === ownQueue)).toHaveLength(POLLS);

  // The owner stops; the next call naming its process says the worker is gone.
  await owner.harness.close();
  owner.closed = true;
  nock.cleanAll();
  const after = nockModel([
    { toolCalls: [{ id: 'call_late_poll', name: 'process', arguments: { action: 'poll', id: processId } }] },
    { text: 'It is gone.' },
  ]);
  const second = await ask(survivor.harness.agent, conversationId, 'Poll it again', {
    options: { approval: { mode: 'auto' } },
  });
  expect(second.finished).toMatchObject({ outcome: 'answered', answer: 'It is gone.' });
  expect(JSON.parse(toolResult(after.requests[1]!, 'call_late_poll'))).toEqual({
    status: 'error',
    tool: 'process',
    error: expect.stringMatching(new RegExp(`^${processId} lived in a worker process that is gone`)),
  });
});
