// A worker whose `deploy` tool needs approval, and a service that gives it: the worker posts each
// approval request to the approver's webhook, and the approver decides through the HTTP gateway.
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { AgentClient } from 'durable-agent';
import { DurableAgentPlugin, defineTool, textResult } from 'durable-agent/worker';
import { z } from 'zod';
import { startApprover } from './approver';
import { startGateway } from './gateway';

const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
const taskQueue = process.env.TASK_QUEUE ?? 'examples';

const deploy = defineTool({
  name: 'deploy',
  label: 'Deploy',
  description: 'Deploys a build to an environment.',
  parameters: z.object({ build: z.string(), environment: z.enum(['staging', 'production']) }),
  category: 'other',
  idempotent: false,
  risk: 'high',
  approval: 'ask', // every call waits for a decision
  async execute(_toolCallId, { build, environment }) {
    return textResult(`build ${build} is live on ${environment}`);
  },
});

async function main(): Promise<void> {
  const secret = randomBytes(24).toString('hex');
  const token = randomBytes(24).toString('hex');
  const gateway = await startGateway({ temporalAddress: address, name: 'deploy-approver', token });
  const approver = await startApprover({ secret, gatewayUrl: gateway.url, token });
  const plugin = new DurableAgentPlugin({
    model: {
      baseURL: process.env.OPENAI_BASE_URL,
      apiKey: process.env.OPENAI_API_KEY ?? 'unused',
      model: process.env.AGENT_MODEL ?? 'gpt-4o-mini',
    },
    tools: [deploy],
    webhooks: [{ url: approver.url, events: ['approval_requested'], secret }],
  });
  const workerConnection = await NativeConnection.connect({ address });
  const worker = await Worker.create({ connection: workerConnection, taskQueue, plugins: [plugin] });
  const connection = await Connection.connect({ address });
  const agent = new AgentClient(new Client({ connection, plugins: [plugin] }), taskQueue);
  await worker.runUntil(async () => {
    const id = `deploy-${Date.now()}`;
    console.log(`conversation ${id}`);
    // Only the gateway token's identity may decide; a request nobody decides is rejected after a minute.
    const options = { approval: { approvers: ['deploy-approver'], timeoutMs: 60_000 } };
    const finished = await agent.ask(id, 'Please deploy build 42 to staging.', { options });
    for (const event of await agent.events(id)) {
      if (event.type === 'approval_decided')
        console.log(`${event.toolName}: ${event.decision} by ${event.by}`);
    }
    console.log(`${finished.outcome}: ${finished.answer}`);
    await agent.end(id);
  });
  await Promise.all([approver.close(), gateway.close(), connection.close()]);
  await workerConnection.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
