import { randomUUID } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { abortUpdate, eventsQuery } from '../../src/shared/conversation-api';
import type { AgentEvent } from '../../src/shared/events';
import { subAgentId } from '../../src/shared/sub-agents';
import { ask, followToEnd } from '../support/ask';
import { type ChatRequest, type ScriptedReply, toolResultIn } from '../support/scripted-model';
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
    usage: { tokens: 15, toolCalls: 0 },
  });
  // The sub-agent's tokens count in its parent's budget: the parent's two model calls and the child's one.
  expect(seen.at(-1)).toMatchObject({ usage: { tokens: 45, toolCalls: 1 } });
  expect((await harness().agent.status(id)).budget?.used).toEqual({ tokens: 45, toolCalls: 1 });
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

const toolNamesOf = (request: ChatRequest | undefined) =>
  (request?.tools ?? []).map((tool) => tool.function.name).sort();

test('a sub-agent gets at most its parent’s tools: asking for profile full does not bring exec back', async () => {
  let childRequest: ChatRequest | undefined;
  let childFollowUp: ChatRequest | undefined;
  nockModel([
    {
      toolCalls: [
        { id: 'call_widen', name: 'sessions_spawn', arguments: { task: 'Run id for me', profile: 'full' } },
      ],
    },
    (request) => {
      childRequest = request;
      return { toolCalls: [{ id: 'call_child_exec', name: 'exec', arguments: { command: 'id' } }] };
    },
    (request) => {
      childFollowUp = request;
      return { text: 'I could not run it.' };
    },
    { text: 'Done.' },
  ]);
  const id = `conv-${randomUUID()}`;
  const sent = await harness().agent.send(id, 'Delegate', {
    options: { allow: ['read', 'sessions_spawn'], approval: { mode: 'auto' } },
  });
  expect((await followToEnd(harness().agent, sent)).finished).toMatchObject({
    outcome: 'answered',
    answer: 'Done.',
  });
  expect(toolNamesOf(childRequest)).toEqual(['read', 'sessions_spawn']);
  const execResult = childFollowUp!.messages.find((message) => message.role === 'tool');
  expect(JSON.parse(execResult!.content as string)).toMatchObject({ status: 'error', tool: 'exec' });
});

test('a run may start only so many sub-agents: the calls beyond the limit get an error the model reads', async () => {
  let parentFollowUp: ChatRequest | undefined;
  nockModel([
    {
      toolCalls: [1, 2, 3].map((n) => ({
        id: `call_many_${n}`,
        name: 'sessions_spawn',
        arguments: { task: `Say ${n}` },
      })),
    },
    { text: 'one' },
    { text: 'two' },
    (request) => {
      parentFollowUp = request;
      return { text: 'Two of three.' };
    },
  ]);
  const id = `conv-${randomUUID()}`;
  const sent = await harness().agent.send(id, 'Delegate three', { options: { subAgents: { maxPerRun: 2 } } });
  expect((await followToEnd(harness().agent, sent)).finished).toMatchObject({
    outcome: 'answered',
    answer: 'Two of three.',
  });
  const results = parentFollowUp!.messages.filter((message) => message.role === 'tool');
  expect(results.map((message) => message.tool_call_id)).toEqual([
    'call_many_1',
    'call_many_2',
    'call_many_3',
  ]);
  expect(JSON.parse(results[2]!.content as string)).toMatchObject({
    status: 'error',
    error: expect.stringMatching(/2 sub-agents at most/),
  });
  expect(
    results
      .slice(0, 2)
      .map((message) => message.content)
      .sort(),
  ).toEqual(['one', 'two']);
});

test('a sub-agent’s approval reaches a watcher of its parent whole, to be decided on the sub-agent from there', async () => {
  nockModel([
    { toolCalls: [{ id: 'call_spawn_ask', name: 'sessions_spawn', arguments: { task: 'Tick twice' } }] },
    { toolCalls: [{ id: 'call_tick', name: 'ticker', arguments: { ticks: 2, everyMs: 10 } }] },
    { text: 'Ticked twice.' },
    { text: 'The sub-agent ticked.' },
  ]);
  const id = `conv-${randomUUID()}`;
  const sent = await harness().agent.send(id, 'Delegate the ticking', {
    options: { approval: { mode: 'auto', tools: { ticker: 'always' } } },
  });
  const childId = subAgentId(id, 'call_spawn_ask');
  const decided: string[] = [];
  for await (const event of harness().agent.watch(id, {
    afterSeq: sent.afterSeq,
    until: (event) => event.type === 'run_finished',
  })) {
    if (event.type !== 'tool_execution_update') continue;
    const details = event.details as { subagent?: string; subagentEvent?: AgentEvent };
    if (details.subagentEvent?.type !== 'approval_requested') continue;
    expect(details.subagent).toBe(childId);
    expect(details.subagentEvent).toMatchObject({ toolCallId: 'call_tick', toolName: 'ticker' });
    // What `watch` on a terminal does with it: ask, then decide on the sub-agent.
    await harness().agent.approve(details.subagent!, {
      toolCallId: details.subagentEvent.toolCallId,
      decision: 'allow_once',
      by: 'alice',
    });
    decided.push(details.subagentEvent.toolCallId);
  }
  expect(decided).toEqual(['call_tick']);
  const child = harness().client.workflow.getHandle(childId);
  expect(await child.result()).toMatchObject({ outcome: 'answered', answer: 'Ticked twice.' });
});

describe('a sub-agent is held to its parent’s settings', () => {
  /** The task a request's conversation was given: its first user message. */
  const taskOf = (request: ChatRequest) =>
    request.messages.find((message) => message.role === 'user')?.content;

  /**
   * A model for a chain of sub-agents: the conversation given `chain[i]` spawns one given
   * `chain[i + 1]`, the last answers; each answers once its tool result is in. Requests and results
   * are kept by task, so a test sees who asked and what each was told, whatever the order.
   */
  function chainModel(chain: string[]) {
    const asked: string[] = [];
    const results = new Map<string, string>();
    const reply = (request: ChatRequest): ScriptedReply => {
      const task = taskOf(request) ?? '';
      asked.push(task);
      const last = request.messages.at(-1);
      if (last?.role === 'tool') {
        results.set(task, last.content ?? '');
        return { text: `${task}: done` };
      }
      const next = chain[chain.indexOf(task) + 1];
      if (next === undefined) return { text: `${task}: answered` };
      return {
        toolCalls: [
          { id: `call_level_${chain.indexOf(task)}`, name: 'sessions_spawn', arguments: { task: next } },
        ],
      };
    };
    nockModel(Array.from({ length: chain.length * 2 + 2 }, () => reply));
    return { asked, results };
  }

  test('exec security: a parent in safe-bin mode has a sub-agent whose commands are checked as its own', async () => {
    const marker = `child-ran-${randomUUID().slice(0, 8)}`;
    let childResult: string | undefined;
    nockModel([
      {
        toolCalls: [{ id: 'call_spawn_exec', name: 'sessions_spawn', arguments: { task: 'Make a marker' } }],
      },
      { toolCalls: [{ id: 'call_child_touch', name: 'exec', arguments: { command: `touch ${marker}` } }] },
      (request) => {
        childResult = toolResultIn(request, 'call_child_touch');
        return { text: 'Refused.' };
      },
      { text: 'Done.' },
    ]);
    const { finished } = await ask(harness().agent, `conv-${randomUUID()}`, 'Delegate a command', {
      options: { execSecurity: 'safe-bin', approval: { mode: 'auto' } },
    });
    expect(finished).toMatchObject({ outcome: 'answered', answer: 'Done.' });
    expect(existsSync(path.join(harness().workspace, marker))).toBe(false);
    expect(childResult).toMatch(/command refused in safe-bin mode/);
  });

  test('workspace: a sub-agent works in its parent’s workspace, not the worker’s default', async () => {
    const workspace = path.join(harness().workspace, `parent-ws-${randomUUID().slice(0, 8)}`);
    await mkdir(workspace);
    let childResult: string | undefined;
    nockModel([
      {
        toolCalls: [{ id: 'call_spawn_pwd', name: 'sessions_spawn', arguments: { task: 'Where are you?' } }],
      },
      { toolCalls: [{ id: 'call_child_pwd', name: 'exec', arguments: { command: 'pwd' } }] },
      (request) => {
        childResult = toolResultIn(request, 'call_child_pwd');
        return { text: 'Here.' };
      },
      { text: 'Done.' },
    ]);
    const { finished } = await ask(harness().agent, `conv-${randomUUID()}`, 'Delegate pwd', {
      options: { workspace, approval: { mode: 'auto' } },
    });
    expect(finished).toMatchObject({ outcome: 'answered', answer: 'Done.' });
    // The result is `exit code 0` and the output: the directory the child's command ran in.
    expect(childResult?.trim().split('\n')).toContain(realpathSync(workspace));
  });

  test('sub-agent depth: a sub-agent of a parent allowed one level cannot start one of its own', async () => {
    const model = chainModel(['Delegate once', 'Level 1 task', 'Level 2 task']);
    const { finished } = await ask(harness().agent, `conv-${randomUUID()}`, 'Delegate once', {
      options: { subAgents: { maxDepth: 1 } },
    });
    expect(finished).toMatchObject({ outcome: 'answered', answer: 'Delegate once: done' });
    expect(model.results.get('Level 1 task')).toMatch(/sub-agents may nest 1 deep at most/);
    expect(model.asked).not.toContain('Level 2 task');
  });

  test('sub-agent timeout: a sub-agent’s own sub-agents get the timeout its parent set', async () => {
    const model = chainModel(['Delegate twice', 'Level 1 task', 'Level 2 task']);
    const id = `conv-${randomUUID()}`;
    const { finished } = await ask(harness().agent, id, 'Delegate twice', {
      options: { subAgents: { timeoutMs: 90_000 } },
    });
    expect(finished).toMatchObject({ outcome: 'answered', answer: 'Delegate twice: done' });
    expect(model.results.get('Level 1 task')).toBe('Level 2 task: answered');
    const child = subAgentId(id, 'call_level_0');
    const grandchild = subAgentId(child, 'call_level_1');
    const timeoutOf = async (workflowId: string) => {
      const config = (await harness().client.workflow.getHandle(workflowId).describe()).raw.executionConfig;
      return Number(config?.workflowExecutionTimeout?.seconds ?? 0);
    };
    expect({ child: await timeoutOf(child), grandchild: await timeoutOf(grandchild) }).toEqual({
      child: 90,
      grandchild: 90,
    });
  });
});
