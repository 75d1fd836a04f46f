import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { AgentClient } from '../../src/client/agent-client';
import { readConversationHistory } from '../../src/cli/read-conversation-history';
import { buildTimeline } from '../../src/history/build-timeline';
import type { ToolCallItem } from '../../src/history/timeline';
import { ask, followToEnd } from '../support/ask';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { startScriptedModelServer } from '../support/scripted-model-server';
import { killWorkerProcess, spawnWorkerProcess, toolAttempts } from '../support/spawn-worker-process';
import { echoTool, localTickerTool, tickerAborts } from '../support/test-tools';
import { startHarness, waitFor } from '../support/test-worker';
import { waitForHeartbeat } from '../support/wait-for-event';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const harness = useNockedHarness([echoTool]);

const activityTypes = (events: HistoryEvent[]) =>
  events.flatMap((event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? []);

/** The activity types of the local activities the history records, in order. */
function localActivityTypes(events: HistoryEvent[]): string[] {
  return events.flatMap((event) => {
    const marker = event.markerRecordedEventAttributes;
    if (marker?.markerName !== 'core_local_activity') return [];
    const data = defaultPayloadConverter.fromPayload(marker.details!.data!.payloads![0]!);
    return [(data as { activity_type: string }).activity_type];
  });
}

test('a read-only tool runs inside the workflow task that scheduled it: no activity, its result recorded with the scheduling of the next model call, and the timeline shows it ran', async () => {
  await writeFile(path.join(harness().workspace, 'local.txt'), 'alpha\nbeta\n');
  const script = nockModel([
    { toolCalls: [{ id: 'call_read', name: 'read', arguments: { path: 'local.txt' } }] },
    { text: 'Read it.' },
  ]);
  const id = `conv-${randomUUID()}`;
  const { finished } = await ask(harness().agent, id, 'What is in local.txt?');
  expect(finished).toMatchObject({ outcome: 'answered', answer: 'Read it.' });
  const toolMessage = script.requests[1]!.messages.find((message) => message.role === 'tool');
  expect(toolMessage).toMatchObject({
    tool_call_id: 'call_read',
    content: expect.stringContaining('alpha\nbeta'),
  });

  const events = (await harness().client.workflow.getHandle(id).fetchHistory()).events ?? [];
  expect(activityTypes(events)).toEqual(['listTools', 'callModel', 'callModel']);
  expect(localActivityTypes(events)).toEqual(['admitConversation', 'composeSystemPrompt', 'runLocalTool']);
  // The workflow task woken by the first model call ran the read and scheduled the second call:
  // the read's result is recorded by the same completion, before that call could start.
  const readMarker = events.find((event) => localActivityTypes([event])[0] === 'runLocalTool')!;
  const secondCall = events.filter(
    (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel',
  )[1]!;
  expect(Number(readMarker.markerRecordedEventAttributes!.workflowTaskCompletedEventId)).toBe(
    Number(secondCall.activityTaskScheduledEventAttributes!.workflowTaskCompletedEventId),
  );
  expect(Number(readMarker.eventId)).toBeLessThan(Number(secondCall.eventId));

  const timeline = buildTimeline(
    id,
    await readConversationHistory(harness().client, id),
    defaultPayloadConverter,
  );
  const calls = timeline.items.filter((item): item is ToolCallItem => item.kind === 'tool_call');
  expect(calls).toEqual([
    expect.objectContaining({
      toolCallId: 'call_read',
      toolName: 'read',
      ran: true,
      outcome: 'completed',
      attempts: 1,
      isError: false,
      result: expect.stringContaining('alpha'),
    }),
  ]);
});

test('a fleet that runs workflows and activities apart runs every tool as an activity, where the tools are', async () => {
  const taskQueue = `split-${randomUUID()}`;
  const model = await startScriptedModelServer([
    { toolCalls: [{ id: 'call_list', name: 'list_directory', arguments: { path: '.' } }] },
    { text: 'Listed.' },
  ]);
  const workflows = await startHarness({ modelBaseUrl: model.baseUrl, taskQueue, serves: 'workflows' });
  const tools = await startHarness({ modelBaseUrl: model.baseUrl, taskQueue, serves: 'activities' });
  try {
    await writeFile(path.join(workflows.workspace, 'listed.txt'), 'x');
    const id = `conv-${randomUUID()}`;
    const { finished } = await ask(workflows.agent, id, 'What is there?', {
      options: { workspace: workflows.workspace },
    });
    expect(finished).toMatchObject({ outcome: 'answered', answer: 'Listed.' });
    const listing = model.script.requests[1]!.messages.find((message) => message.role === 'tool');
    expect(listing?.content).toContain('listed.txt');
    const events = (await workflows.client.workflow.getHandle(id).fetchHistory()).events ?? [];
    expect(activityTypes(events)).toContain('runTool');
    expect(localActivityTypes(events)).not.toContain('runLocalTool');
  } finally {
    await workflows.close();
    await tools.close();
    await model.close();
  }
});

test('a local tool that outlasts its attempt is cut off and its call runs as an activity, which a steer stops: its partial result and the message reach the model', async () => {
  const model = await startScriptedModelServer([
    { toolCalls: [{ id: 'call_local_tick', name: 'local_ticker', arguments: { ticks: 600 } }] },
    { text: 'Stopped counting.' },
  ]);
  const local = await startHarness({ modelBaseUrl: model.baseUrl, tools: [localTickerTool] });
  try {
    const id = `conv-${randomUUID()}`;
    const sent = await local.agent.send(id, 'Count to 600');
    const handle = local.client.workflow.getHandle(id);
    // Heartbeats come only from an activity: the call left its local attempt.
    await waitForHeartbeat(handle, (details) => /tick [3-9]/.test(JSON.stringify(details)));
    await local.agent.steer(id, 'Enough');
    const { finished } = await followToEnd(local.agent, sent);
    expect(finished).toMatchObject({ outcome: 'answered', answer: 'Stopped counting.' });

    const events = (await handle.fetchHistory()).events ?? [];
    expect(localActivityTypes(events)).toEqual(['admitConversation', 'composeSystemPrompt', 'runLocalTool']);
    const attempt = events.find(
      (event) =>
        event.markerRecordedEventAttributes?.markerName === 'core_local_activity' &&
        event.markerRecordedEventAttributes.failure,
    );
    expect(attempt?.markerRecordedEventAttributes?.failure?.timeoutFailureInfo).toBeDefined();
    expect(activityTypes(events)).toEqual(['listTools', 'callModel', 'runTool', 'callModel']);
    const toolMessage = model.script.requests[1]!.messages.find((message) => message.role === 'tool');
    expect(toolMessage?.content).toMatch(/^ticked \d+ of 600\n\[interrupted before it finished/);
    expect(tickerAborts.has('call_local_tick')).toBe(true);
  } finally {
    await local.close();
    await model.close();
  }
});

describe('a worker killed while a local tool runs past its attempt', () => {
  let connection: Connection;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  });
  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await connection.close();
  });

  test('the call, cut off locally and running as an activity, runs again on the next worker and the conversation answers, with the tool recorded once', async () => {
    const model = await startScriptedModelServer([
      { toolCalls: [{ id: 'call_count', name: 'local_count', arguments: { n: 5 } }] },
      { text: 'Counted.' },
    ]);
    const markerDir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-local-crash-'));
    await writeFile(path.join(markerDir, 'hold'), '');
    const env = {
      TASK_QUEUE: `local-crash-${randomUUID()}`,
      OPENAI_BASE_URL: model.baseUrl,
      WORKSPACE: markerDir,
      MARKER_DIR: markerDir,
    };
    const attempts = () => toolAttempts(markerDir);
    try {
      const first = await spawnWorkerProcess(env);
      children.push(first);
      const client = new Client({ connection });
      const agent = new AgentClient(client, env.TASK_QUEUE);
      const id = `conv-${randomUUID()}`;
      const sent = await agent.send(id, 'Count, slowly.', { options: { approval: { mode: 'auto' } } });
      // The local attempt, cut off, then the activity's first attempt, on the same worker.
      await waitFor(async () => ((await attempts()).length === 2 ? true : undefined), 'the activity attempt');
      await killWorkerProcess(first);
      children.push(await spawnWorkerProcess(env));
      await rm(path.join(markerDir, 'hold'));

      expect((await followToEnd(agent, sent)).finished).toMatchObject({
        outcome: 'answered',
        answer: 'Counted.',
      });
      const pids = (await attempts()).map((line) => line.split(' ')[0]);
      expect(pids).toHaveLength(3);
      expect(pids[1]).toBe(pids[0]);
      expect(pids[2]).not.toBe(pids[0]);
      expect(model.script.requests).toHaveLength(2);
      const tool = model.script.requests[1]!.messages.find((message) => message.role === 'tool');
      expect(tool?.content).toContain('counted to 5');

      const events = (await client.workflow.getHandle(id).fetchHistory()).events ?? [];
      expect(localActivityTypes(events).filter((type) => type === 'runLocalTool')).toHaveLength(1);
      expect(activityTypes(events).filter((type) => type === 'runTool')).toHaveLength(1);
    } finally {
      await model.close();
    }
  }, 120_000);
});
