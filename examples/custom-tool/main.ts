// A worker with a tool of your own: a typed `defineTool` with a zod schema, added to your Worker
// through the durable-agent plugin, and a client that asks a question the tool answers.
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { AgentClient } from 'durable-agent';
import { DurableAgentPlugin, ToolError, defineTool, textResult } from 'durable-agent/worker';
import { z } from 'zod';

const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
const taskQueue = process.env.TASK_QUEUE ?? 'examples';
const STOCK: Record<string, number> = { 'blue-mug': 12, 'red-mug': 0 };

const stockLevel = defineTool({
  name: 'stock_level',
  label: 'Stock level',
  description: 'How many of a product (by SKU) are in the warehouse.',
  parameters: z.object({ sku: z.string().describe('the product SKU, e.g. blue-mug') }),
  category: 'other',
  idempotent: true,
  risk: 'low',
  async execute(_toolCallId, { sku }) {
    const count = STOCK[sku];
    if (count === undefined) throw new ToolError('NotFound', `no product has the SKU ${sku}`);
    return textResult(`${count} of ${sku} in stock`);
  },
});

async function main(): Promise<void> {
  const plugin = new DurableAgentPlugin({
    model: {
      baseURL: process.env.OPENAI_BASE_URL,
      apiKey: process.env.OPENAI_API_KEY ?? 'unused',
      model: process.env.AGENT_MODEL ?? 'gpt-4o-mini',
    },
    tools: [stockLevel],
  });
  const workerConnection = await NativeConnection.connect({ address });
  const worker = await Worker.create({ connection: workerConnection, taskQueue, plugins: [plugin] });
  const connection = await Connection.connect({ address });
  const agent = new AgentClient(new Client({ connection, plugins: [plugin] }), taskQueue);
  await worker.runUntil(async () => {
    const finished = await agent.ask(`stock-${Date.now()}`, 'How many blue mugs do we have?');
    console.log(`${finished.outcome}: ${finished.answer}`);
  });
  await connection.close();
  await workerConnection.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
