import { randomUUID } from 'node:crypto';
import type { ConversationResult } from '../../src/workflows/conversation';
import type { AgentEvent } from '../../src/shared/events';
import { ScriptedModel, mockedActivities, textOutcome, toolDescriptor } from '../support/mocked-activities';
import { describeWithTimeSkipping } from '../support/time-skipping';
import { eventsOf, waitForEvent } from '../support/wait-for-event';
import { waitFor } from '../support/test-worker';

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;

/** A tool with side effects: it asks for approval before it runs. */
const deploy = toolDescriptor('deploy', { risk: 'high' });
const deployCall = { id: 'call_deploy', name: 'deploy', arguments: { target: 'production' } };

const conversationId = () => `conv-${randomUUID()}`;
const ofType = <T extends AgentEvent['type']>(events: AgentEvent[], type: T) =>
  events.filter((event): event is Extract<AgentEvent, { type: T }> => event.type === type);

describeWithTimeSkipping('conversation timeouts on a time-skipping server', (harness) => {
  const handleOf = (id: string) => harness().client.workflow.getHandle(id);

  test('an approval nobody gives within its hour is rejected as timed out, and the model is told so', async () => {
    const model = new ScriptedModel([{ toolCalls: [deployCall] }, { text: 'Nobody approved the deploy.' }]);
    const { activities, toolRuns } = mockedActivities({ model, tools: [deploy] });
    const id = conversationId();

    await harness().withWorker(activities, async ({ agent }) => {
      await agent.send(id, 'Deploy to production', { options: { approval: { timeoutMs: HOUR } } });
      const pending = await waitFor(
        async () =>
          (await agent.pendingApprovals(id)).find((approval) => approval.toolCallId === deployCall.id),
        'the deploy approval to be pending',
      );
      expect(pending.expiresAt).toBe(pending.requestedAt + HOUR);

      await harness().env.sleep(HOUR);
      const finished = await waitForEvent(handleOf(id), 'run_finished');
      expect(finished).toMatchObject({ outcome: 'answered', answer: 'Nobody approved the deploy.' });

      const decided = ofType(await eventsOf(handleOf(id)), 'approval_decided');
      expect(decided).toEqual([
        expect.objectContaining({
          toolCallId: deployCall.id,
          decision: 'reject_once',
          by: 'timeout',
          reason: 'no decision within 3600s',
        }),
      ]);
      const requested = ofType(await eventsOf(handleOf(id)), 'approval_requested')[0]!;
      expect(decided[0]!.at - requested.at).toBeGreaterThanOrEqual(HOUR);

      await agent.end(id);
      expect(await handleOf(id).result()).toMatchObject<Partial<ConversationResult>>({
        endedBy: 'end',
        runs: 1,
      });
    });

    // The model read the refusal as the tool's result; the tool never ran.
    const told = model.toolResult(deployCall.id);
    expect(told).toMatchObject({ toolName: 'deploy', isError: true });
    expect(JSON.parse((told!.content[0] as { text: string }).text)).toEqual({
      status: 'blocked',
      tool: 'deploy',
      reason: 'approval timed out: no decision within 3600s',
    });
    expect(toolRuns).toEqual([]);
    expect(model.unanswered).toBe(0);
  });

  test('a conversation left idle for its day ends itself', async () => {
    const model = new ScriptedModel([{ text: 'Hello.' }]);
    const { activities } = mockedActivities({ model });
    const id = conversationId();

    const result = await harness().withWorker(activities, async ({ agent }) => {
      await agent.send(id, 'Hi', { options: { idleTimeoutMs: DAY } });
      await waitForEvent(handleOf(id), 'run_finished');
      const idleSince = await harness().env.currentTimeMs();
      // Awaiting the result lets the server skip to the idle timer.
      const ended = await handleOf(id).result();
      expect((await harness().env.currentTimeMs()) - idleSince).toBeGreaterThanOrEqual(DAY);
      return ended as ConversationResult;
    });

    expect(result).toEqual({
      runs: 1,
      messages: 2,
      endedBy: 'idle_timeout',
      outcome: 'answered',
      answer: 'Hello.',
      // The mocked model reports no usage.
      usage: { tokens: 0, toolCalls: 0 },
    });
  });

  test('a decision that comes before the timeout is honoured, and no timeout follows it', async () => {
    const model = new ScriptedModel([{ toolCalls: [deployCall] }, { text: 'Deployed.' }]);
    const { activities, toolRuns } = mockedActivities({
      model,
      tools: [deploy],
      runTool: () => textOutcome('deployed to production'),
    });
    const id = conversationId();

    await harness().withWorker(activities, async ({ agent }) => {
      await agent.send(id, 'Deploy to production', { options: { approval: { timeoutMs: HOUR } } });
      await waitFor(
        async () =>
          (await agent.pendingApprovals(id)).find((approval) => approval.toolCallId === deployCall.id),
        'the deploy approval to be pending',
      );
      // Most of the hour goes by; the approval still waits.
      await harness().env.sleep(HOUR - 60_000);
      expect((await agent.pendingApprovals(id)).map((approval) => approval.toolCallId)).toEqual([
        deployCall.id,
      ]);

      await agent.approve(id, { toolCallId: deployCall.id, decision: 'allow_once', by: 'alice' });
      expect(await waitForEvent(handleOf(id), 'run_finished')).toMatchObject({
        outcome: 'answered',
        answer: 'Deployed.',
      });
      // Past the hour: the approval's timer, had it been left, would have fired by now.
      await harness().env.sleep(2 * HOUR);

      const decided = ofType(await eventsOf(handleOf(id)), 'approval_decided');
      expect(decided).toEqual([
        expect.objectContaining({ toolCallId: deployCall.id, decision: 'allow_once', by: 'alice' }),
      ]);
      expect((await agent.status(id)).status).toBe('idle');
      await agent.end(id);
      await handleOf(id).result();
    });

    expect(toolRuns).toEqual([
      expect.objectContaining({
        toolCallId: deployCall.id,
        toolName: 'deploy',
        arguments: { target: 'production' },
      }),
    ]);
    expect(model.toolResult(deployCall.id)).toMatchObject({
      isError: false,
      content: [{ type: 'text', text: 'deployed to production' }],
    });
    expect(model.unanswered).toBe(0);
  });
  test('a deadline counts from the conversation’s start, idle time included; a budget pause nobody decides stops the run', async () => {
    const model = new ScriptedModel([{ text: 'In time.' }]);
    const { activities } = mockedActivities({ model });
    const id = conversationId();

    await harness().withWorker(activities, async ({ agent }) => {
      await agent.send(id, 'First', {
        options: { budget: { deadlineMs: 2 * HOUR }, approval: { timeoutMs: 10 * 60_000 } },
      });
      expect(await waitForEvent(handleOf(id), 'run_finished')).toMatchObject({ outcome: 'answered' });

      // Three hours later the deadline has passed: the next run asks before calling the model.
      await harness().env.sleep(3 * HOUR);
      await agent.send(id, 'Second');
      const pause = await waitFor(
        async () => (await agent.pendingApprovals(id)).find((approval) => approval.toolCallId === 'budget-1'),
        'the deadline pause',
      );
      expect(pause.budget).toMatchObject({ kind: 'deadlineMs', limit: 2 * HOUR, defaultRaise: 2 * HOUR });
      expect(pause.budget!.used).toBeGreaterThanOrEqual(3 * HOUR);
      expect(pause.expiresAt).toBe(pause.requestedAt + 10 * 60_000);

      await harness().env.sleep(10 * 60_000);
      expect(await waitForEvent(handleOf(id), 'run_finished', (event) => event.run === 2)).toMatchObject({
        outcome: 'budget_exhausted',
      });
      expect(ofType(await eventsOf(handleOf(id)), 'budget_exhausted')).toEqual([
        expect.objectContaining({ budget: 'deadlineMs', limit: 2 * HOUR, by: 'timeout' }),
      ]);
      await agent.end(id);
      await handleOf(id).result();
    });
    expect(model.calls).toHaveLength(1);
  });
});
