import { randomUUID } from 'node:crypto';
import { approveUpdate, pendingApprovalsQuery, stateQuery } from '../../src/shared/conversation-api';
import type { ChatRequest } from '../support/scripted-model';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { echoTool, recordTool, recorded } from '../support/test-tools';
import { waitFor } from '../support/test-worker';
import { waitForEvent } from '../support/wait-for-event';

const harness = useNockedHarness([echoTool, recordTool]);
const MAX_HISTORY_EVENTS = 50;

const usersSeen = (request: ChatRequest) => request.messages.filter((m) => m.role === 'user').length;

/**
 * The runs of a workflow id, oldest first, from visibility, once it lists the current run: every
 * server writes visibility after the fact (a cluster through its visibility queue into its
 * database), so a listing taken at once can miss the newest runs.
 */
async function runsOf(id: string) {
  return waitFor(async () => {
    const { runId: current } = await harness().client.workflow.getHandle(id).describe();
    const runs: { runId: string; historyLength: number }[] = [];
    for await (const execution of harness().client.workflow.list({ query: `WorkflowId = '${id}'` })) {
      runs.push({ runId: execution.runId, historyLength: execution.historyLength });
    }
    return runs.some((run) => run.runId === current) ? runs.reverse() : undefined;
  }, `visibility to list the current run of ${id}`);
}

test('a long conversation continues as new with nothing lost: transcript, standing approvals, messages sent during the hand-over', async () => {
  const id = `conv-${randomUUID()}`;
  const handle = harness().client.workflow.getHandle(id);
  const writeOnce = `call_always_${randomUUID().slice(0, 8)}`;
  // Every turn: a tool call, then an answer that says how many user messages the model saw.
  const turns = 12;
  const steps = Array.from({ length: turns }, (_, turn) => [
    turn === 0
      ? { toolCalls: [{ id: writeOnce, name: 'record', arguments: { value: 'first' } }] }
      : {
          toolCalls: [
            {
              name: turn % 2 ? 'echo' : 'record',
              arguments: turn % 2 ? { text: `t${turn}` } : { value: `v${turn}` },
            },
          ],
        },
    (request: ChatRequest) => ({ text: `seen ${usersSeen(request)}` }),
  ]).flat();
  nockModel(steps);

  await harness().agent.send(id, 'message 1', { options: { maxHistoryEvents: MAX_HISTORY_EVENTS } });
  await waitFor(async () => {
    const pending = await handle.query(pendingApprovalsQuery);
    return pending.some((approval) => approval.toolCallId === writeOnce) || undefined;
  }, 'the first approval');
  await handle.executeUpdate(approveUpdate, {
    args: [{ toolCallId: writeOnce, decision: 'allow_always', by: 'alice' }],
  });
  await waitForEvent(handle, 'run_finished', (event) => event.run === 1);

  // Half the messages one by one, the rest all at once, so some arrive while the conversation hands over.
  for (let index = 2; index <= turns / 2; index++) {
    await harness().agent.send(id, `message ${index}`);
    await waitForEvent(handle, 'run_finished', (event) => event.messageIds.length > 0 && event.run >= index);
  }
  await Promise.all(
    Array.from({ length: turns / 2 }, (_, offset) =>
      harness().agent.send(id, `message ${turns / 2 + 1 + offset}`),
    ),
  );
  const state = await waitFor(async () => {
    const current = await handle.query(stateQuery);
    const users = current.transcript.filter((message) => message.role === 'user');
    return users.length === turns && current.status === 'idle' && current.queuedMessages === 0
      ? current
      : undefined;
  }, 'every message to be answered');

  const users = state.transcript.filter((message) => message.role === 'user').map((m) => m.content);
  expect(users.sort()).toEqual(Array.from({ length: turns }, (_, index) => `message ${index + 1}`).sort());
  // The model saw the whole conversation every time: the last answer counts every user message so far.
  const answers = state.transcript.flatMap((message) =>
    message.role === 'assistant' && message.content[0]?.type === 'text' ? [message.content[0].text] : [],
  );
  expect(answers.at(-1)).toBe(`seen ${turns}`);
  // allow_always held across runs: record ran each time it was asked, with a single approval.
  const recordedValues = [...recorded.values()];
  expect(recordedValues).toEqual(expect.arrayContaining(['first', 'v2', 'v4']));
  const asked = state.events.filter((event) => event.type === 'approval_requested');
  expect(asked.map((event) => event.run)).toEqual([1]);

  const runs = await waitFor(async () => {
    const listed = await runsOf(id);
    return listed.length > 2 ? listed : undefined;
  }, 'several runs in visibility');
  for (const run of runs.slice(0, -1)) {
    const history = await harness().client.workflow.getHandle(id, run.runId).fetchHistory();
    // Bounded: a run continues at the first idle point after the limit, so it overshoots by at most one run.
    expect(history.events!.length).toBeLessThan(MAX_HISTORY_EVENTS * 2);
  }
  // Event numbering goes on across runs, so watchers that remember a sequence number keep working.
  const seqs = state.events.map((event) => event.seq);
  expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
});

test('a long run continues as new between its turns and resumes where it stopped: every tool result kept, one run, one answer', async () => {
  const id = `conv-${randomUUID()}`;
  const handle = harness().client.workflow.getHandle(id);
  const iterations = 24;
  // One run: a tool call per model call, then an answer counting the tool results the model saw.
  const toolResultsSeen = (request: ChatRequest) => request.messages.filter((m) => m.role === 'tool').length;
  nockModel([
    ...Array.from({ length: iterations }, (_, turn) => ({
      toolCalls: [{ name: 'echo', arguments: { text: `turn ${turn}` } }],
    })),
    (request: ChatRequest) => ({
      text: `saw ${toolResultsSeen(request)} results, ${usersSeen(request)} user`,
    }),
    (request: ChatRequest) => ({ text: `second run saw ${usersSeen(request)} users` }),
  ]);

  await harness().agent.send(id, 'work for a long time', {
    options: { maxHistoryEvents: MAX_HISTORY_EVENTS, maxToolIterations: iterations + 1 },
  });
  // Sent while the first run is still going: it waits for the next run, across the hand-overs.
  await waitForEvent(handle, 'tool_execution_end', (event) => event.run === 1);
  await harness().agent.send(id, 'and then this');

  const finished = await waitForEvent(handle, 'run_finished', (event) => event.run === 2);
  expect(finished.answer).toBe('second run saw 2 users');
  const state = await handle.query(stateQuery);
  const firstRun = state.events.filter((event) => event.run === 1);
  expect(firstRun.filter((event) => event.type === 'run_finished')).toEqual([
    expect.objectContaining({ outcome: 'answered', answer: `saw ${iterations} results, 1 user` }),
  ]);
  const results = state.transcript.filter((message) => message.role === 'toolResult');
  expect(results.map((message) => message.content[0]?.type === 'text' && message.content[0].text)).toEqual(
    Array.from({ length: iterations }, (_, turn) => `echo: turn ${turn}`),
  );

  const runs = await runsOf(id);
  // The first run alone needs well over the limit, so it was handed over between turns, more than once.
  expect(runs.length).toBeGreaterThan(2);
  for (const run of runs.slice(0, -1)) {
    const history = await harness().client.workflow.getHandle(id, run.runId).fetchHistory();
    expect(history.events!.length).toBeLessThan(MAX_HISTORY_EVENTS + 20);
  }
});

test('an approval mode set during the conversation holds in the executions after continue-as-new', async () => {
  const id = `conv-${randomUUID()}`;
  const handle = harness().client.workflow.getHandle(id);
  const lastUser = (request: ChatRequest) =>
    [...request.messages].reverse().find((message) => message.role !== 'system')!;
  // A tool call when asked to echo, text otherwise (and after the tool's result).
  const step = (request: ChatRequest) => {
    const last = lastUser(request);
    return last.role === 'user' && last.content === 'use echo'
      ? { toolCalls: [{ id: 'call_echo_after', name: 'echo', arguments: { text: 'hi' } }] }
      : { text: 'ok' };
  };
  nockModel(Array.from({ length: 30 }, () => step));

  await harness().agent.send(id, 'hello', { options: { maxHistoryEvents: MAX_HISTORY_EVENTS } });
  await waitForEvent(handle, 'run_finished', (event) => event.run === 1);
  expect(await harness().agent.setApprovalMode(id, { mode: 'ask', by: 'alice' })).toEqual({ mode: 'ask' });

  for (let index = 2; (await runsOf(id)).length < 2; index++) {
    if (index > 20) throw new Error('the conversation never continued as new');
    await harness().agent.send(id, `message ${index}`);
    await waitForEvent(handle, 'run_finished', (event) => event.run === index);
  }
  expect((await harness().agent.status(id)).approvalMode).toBe('ask');
  // echo asks nothing by default; in `ask` mode it waits for a person.
  await harness().agent.send(id, 'use echo');
  const pending = await waitFor(async () => {
    const approvals = await handle.query(pendingApprovalsQuery);
    return approvals.find((approval) => approval.toolCallId === 'call_echo_after');
  }, 'the echo call to ask');
  expect(pending.toolName).toBe('echo');
});
