// A background agent on a schedule: every morning at 07:00 (UTC) a conversation starts with the same
// prompt and answers it with a read-only tool of its own. The demo triggers the schedule once,
// follows the conversation it starts to its answer, then deletes the schedule.
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { AgentClient, ConversationSchedules } from 'durable-agent';
import { DurableAgentPlugin, defineTool, jsonResult } from 'durable-agent/worker';
import { z } from 'zod';

const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
const taskQueue = process.env.TASK_QUEUE ?? 'examples';
const scheduleId = process.env.SCHEDULE_ID ?? 'daily-ticket-summary';

const openTickets = defineTool({
  name: 'open_tickets',
  label: 'Open tickets',
  description: 'The tickets opened yesterday that are still open.',
  parameters: z.object({}),
  category: 'other',
  idempotent: true,
  risk: 'low', // read-only: runs without asking, as nobody is there to approve
  async execute() {
    return jsonResult([
      { id: 'T-101', title: 'Login fails on Safari', priority: 'high' },
      { id: 'T-102', title: 'Typo on the pricing page', priority: 'low' },
    ]);
  },
});

/** The conversation the schedule started first, once Temporal lists it. */
async function firstConversation(schedules: ConversationSchedules): Promise<string> {
  for (let waited = 0; waited < 30_000; waited += 200) {
    const [first] = await schedules.recentConversations(scheduleId);
    if (first) return first;
    await sleep(200);
  }
  throw new Error(`schedule ${scheduleId} started no conversation in 30 s`);
}

async function main(): Promise<void> {
  const plugin = new DurableAgentPlugin({
    model: {
      baseURL: process.env.OPENAI_BASE_URL,
      apiKey: process.env.OPENAI_API_KEY ?? 'unused',
      model: process.env.AGENT_MODEL ?? 'gpt-4o-mini',
    },
    tools: [openTickets],
  });
  const workerConnection = await NativeConnection.connect({ address });
  const worker = await Worker.create({ connection: workerConnection, taskQueue, plugins: [plugin] });
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, plugins: [plugin] });
  const agent = new AgentClient(client, taskQueue);
  const schedules = new ConversationSchedules(client, taskQueue);
  await worker.runUntil(async () => {
    await schedules.create({ scheduleId, cron: '0 7 * * *', prompt: "Summarise yesterday's open tickets." });
    try {
      await schedules.trigger(scheduleId); // now, instead of waiting for 07:00
      const conversationId = await firstConversation(schedules);
      console.log(`schedule ${scheduleId} started ${conversationId}`);
      // Its first run, to the end: the generator's return value says how it ended.
      const following = agent.followRun(
        { conversationId, afterSeq: 0 },
        { signal: AbortSignal.timeout(120_000) },
      );
      let next = await following.next();
      while (!next.done) next = await following.next();
      if (next.value.how !== 'finished') throw new Error(`the run did not finish: ${next.value.how}`);
      await agent.end(conversationId); // scheduled conversations otherwise wait a day for a follow-up
      console.log(`${next.value.event.outcome}: ${next.value.event.answer}`);
    } finally {
      await schedules.delete(scheduleId);
    }
  });
  await connection.close();
  await workerConnection.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
