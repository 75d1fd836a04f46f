// Your worker runs your workflows and activities; the plugin adds durable-agent's beside them.
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { DurableAgentPlugin } from 'durable-agent/worker';
import { createSupportActivities } from './activities';
import type { answerTicket } from './workflows';

const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
const taskQueue = process.env.TASK_QUEUE ?? 'examples';

async function main(): Promise<void> {
  const plugin = new DurableAgentPlugin({
    model: {
      baseURL: process.env.OPENAI_BASE_URL,
      apiKey: process.env.OPENAI_API_KEY ?? 'unused',
      model: process.env.AGENT_MODEL ?? 'gpt-4o-mini',
    },
    tools: [],
  });
  const workerConnection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection: workerConnection,
    taskQueue,
    workflowsPath: require.resolve('./workflows'),
    activities: createSupportActivities([]),
    plugins: [plugin],
  });
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, plugins: [plugin] });
  await worker.runUntil(async () => {
    const result = await client.workflow.execute<typeof answerTicket>('answerTicket', {
      taskQueue,
      workflowId: `support-${Date.now()}`,
      args: [{ id: String(Date.now()), text: 'My mug arrived broken.' }],
    });
    console.log(result);
  });
  await connection.close();
  await workerConnection.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
