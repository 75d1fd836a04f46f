import { randomUUID } from 'node:crypto';
import { ConversationSchedules } from '../../src/client/conversation-schedules';
import type { Timeline } from '../../src/history/timeline';
import { assertConversationId } from '../../src/shared/ids';
import { assertCliBuilt, runCli } from '../support/cli-process';
import type { ChatRequest } from '../support/scripted-model';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';
import { type TestHarness, startHarness, waitFor } from '../support/test-worker';
import { waitForEvent } from '../support/wait-for-event';

const PROMPT = 'Write the morning report';
const scheduleId = `sched-${randomUUID().slice(0, 8)}`;
let model: ScriptedModelServer;
let harness: TestHarness;
let env: NodeJS.ProcessEnv;

/** The model answers only when the conversation opened with the scheduled prompt. */
const answerThePrompt = (request: ChatRequest) => ({
  text: request.messages.some((message) => message.role === 'user' && message.content === PROMPT)
    ? 'Report ready.'
    : 'I was not given the prompt.',
});

beforeAll(async () => {
  assertCliBuilt();
  model = await startScriptedModelServer([answerThePrompt, answerThePrompt]);
  harness = await startHarness({ modelBaseUrl: model.baseUrl });
  env = {
    ...process.env,
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS,
    AGENT_TASK_QUEUE: harness.taskQueue,
  };
});

afterAll(async () => {
  await new ConversationSchedules(harness.client, harness.taskQueue)
    .delete(scheduleId)
    .catch(() => undefined);
  await harness?.close();
  await model?.close();
});

test('a schedule starts conversations that open with its prompt and answer it; list, trigger and delete', async () => {
  // Once a year, so only triggers fire during the test.
  const created = await runCli(
    ['schedule', PROMPT, '--cron', '0 0 1 1 *', '--id', scheduleId, '--approval', 'auto'],
    env,
  );
  expect(created.stderr).toMatch(
    new RegExp(`schedule ${scheduleId} starts a conversation on task queue ${harness.taskQueue}`),
  );
  expect(created.code).toBe(0);
  expect(created.stdout).toBe(`${scheduleId}\n`);

  // Conversations stay open after answering: the schedule must not skip while one is open.
  const description = await harness.client.schedule.getHandle(scheduleId).describe();
  expect(description.policies.overlap).toBe('ALLOW_ALL');

  const schedules = new ConversationSchedules(harness.client, harness.taskQueue);
  const conversationsAfter = async (count: number) =>
    waitFor(async () => {
      const started = await schedules.recentConversations(scheduleId);
      return started.length >= count ? started : undefined;
    }, `${count} scheduled conversations`);

  expect((await runCli(['schedule', 'trigger', scheduleId], env)).code).toBe(0);
  const [first] = await conversationsAfter(1);
  expect(first).toMatch(new RegExp(`^${scheduleId}-\\d{4}-\\d\\d-\\d\\dT`));
  expect(assertConversationId(first!)).toBe(first);
  const answered = await waitForEvent(harness.client.workflow.getHandle(first!), 'run_finished');
  expect(answered).toMatchObject({ run: 1, outcome: 'answered', answer: 'Report ready.' });

  // A second start while the first conversation is still open.
  expect((await runCli(['schedule', 'trigger', scheduleId], env)).code).toBe(0);
  const [, second] = await conversationsAfter(2);
  const answeredAgain = await waitForEvent(harness.client.workflow.getHandle(second!), 'run_finished');
  expect(answeredAgain.answer).toBe('Report ready.');
  expect((await harness.agent.execution(first!)).executionStatus).toBe('RUNNING');

  const history = await runCli(['history', first!, '--json'], env);
  expect(history.code).toBe(0);
  const timeline = JSON.parse(history.stdout) as Timeline;
  expect(timeline.items.find((item) => item.kind === 'user_message')).toMatchObject({
    text: PROMPT,
    via: 'start',
  });

  const listed = await waitFor(async () => {
    const list = await runCli(['schedule', 'list', '--json'], env);
    return list.stdout
      .trimEnd()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { scheduleId: string; recentConversations: string[] })
      .find((entry) => entry.scheduleId === scheduleId && entry.recentConversations.length === 2);
  }, 'the schedule in schedule list');
  expect(listed).toMatchObject({
    cron: '0 0 1 1 *',
    prompt: PROMPT,
    paused: false,
    recentConversations: [first, second],
  });

  const deleted = await runCli(['schedule', 'delete', scheduleId], env);
  expect(deleted.code).toBe(0);
  expect(deleted.stderr).toMatch(/deleted; the conversations it started go on/);
  const again = await runCli(['schedule', 'trigger', scheduleId], env);
  expect(again.code).toBe(1);
  expect(again.stderr).toBe(`durable-agent: schedule ${scheduleId} not found\n`);
  for (const conversation of [first!, second!]) await harness.agent.end(conversation);
});
