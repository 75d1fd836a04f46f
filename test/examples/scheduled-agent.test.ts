import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { ConversationSchedules } from '../../src/client/conversation-schedules';
import { ScheduleMissingError } from '../../src/shared/conversation-errors';
import { runExample } from '../support/run-example';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';

let model: ScriptedModelServer | undefined;
afterEach(async () => model?.close());

test('examples/scheduled-agent: the triggered schedule starts a conversation that answers with the tool, then is deleted', async () => {
  model = await startScriptedModelServer([
    { toolCalls: [{ id: 'call_tickets', name: 'open_tickets', arguments: {} }] },
    { text: 'Two tickets are open: T-101 (high) and T-102 (low).' },
  ]);
  const scheduleId = `daily-ticket-summary-${randomUUID().slice(0, 8)}`;
  const env = {
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
    OPENAI_BASE_URL: model.baseUrl,
    TASK_QUEUE: `example-scheduled-agent-${randomUUID()}`,
    SCHEDULE_ID: scheduleId,
  };
  const lines = (await runExample('scheduled-agent', env)).trim().split('\n');
  expect(lines.at(-1)).toBe('answered: Two tickets are open: T-101 (high) and T-102 (low).');
  // The conversation was the schedule's (its id is the schedule's, plus the time it was started for).
  expect(lines[0]).toMatch(new RegExp(`^schedule ${scheduleId} started ${scheduleId}-\\S+$`));
  expect(JSON.stringify(model.script.requests[0]!.messages)).toContain("Summarise yesterday's open tickets.");
  expect(JSON.stringify(model.script.requests[1]!.messages)).toContain('Login fails on Safari');

  const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
  try {
    const schedules = new ConversationSchedules(new Client({ connection }), env.TASK_QUEUE);
    await expect(schedules.recentConversations(scheduleId)).rejects.toBeInstanceOf(ScheduleMissingError);
  } finally {
    await connection.close();
  }
});
