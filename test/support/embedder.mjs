// An embedder of durable-agent, using nothing but the package's entry points (`durable-agent`,
// `durable-agent/worker`): a worker with a tool of its own and a redacting hook, and a client that
// asks a question. Environment: TEMPORAL_ADDRESS, OPENAI_BASE_URL, TASK_QUEUE, WORKSPACE,
// WORKFLOW_BUNDLE. Prints the answer and the stored tool result as one JSON line.
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import durableAgent from 'durable-agent';
import durableAgentWorker from 'durable-agent/worker';
import OpenAI from 'openai';
import { z } from 'zod';

const { AgentClient } = durableAgent;
const { ToolRegistry, builtinTools, createAgentWorker, defineTool, textResult } = durableAgentWorker;

const weather = defineTool({
  name: 'weather',
  label: 'Weather',
  description: 'The weather in a city.',
  parameters: z.object({ city: z.string() }),
  category: 'other',
  idempotent: true,
  risk: 'low',
  async execute(_id, { city }) {
    return textResult(`sunny in ${city}, api key sk-live-1234`);
  },
});
const redact = {
  toolResultPersist: ({ result }) => ({
    ...result,
    content: result.content.map((b) =>
      b.type === 'text' ? { ...b, text: b.text.replace(/sk-live-\d+/, '[key]') } : b,
    ),
  }),
};

async function main() {
  const env = process.env;
  const connection = await NativeConnection.connect({ address: env.TEMPORAL_ADDRESS });
  const worker = await createAgentWorker({
    connection,
    namespace: 'default',
    taskQueue: env.TASK_QUEUE,
    workflowBundlePath: env.WORKFLOW_BUNDLE,
    shutdownGraceTimeMs: 1000,
    activities: {
      openai: new OpenAI({ baseURL: env.OPENAI_BASE_URL, apiKey: 'embedder', maxRetries: 0 }),
      defaultModel: 'scripted-model',
      tools: new ToolRegistry([...builtinTools(), weather]),
      defaultWorkspace: env.WORKSPACE,
      hooks: [redact],
    },
  });
  await worker.runUntil(async () => {
    const clientConnection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
    const agent = new AgentClient(new Client({ connection: clientConnection }), env.TASK_QUEUE);
    const sent = await agent.send(`embedded-${Date.now()}`, 'Weather in Lisbon?');
    const follow = agent.followRun(sent, { pollMs: 100 });
    let next = await follow.next();
    while (!next.done) next = await follow.next();
    if (next.value.how !== 'finished') throw new Error(`no answer: ${JSON.stringify(next.value)}`);
    const state = await agent.state(sent.conversationId);
    const result = state.transcript.find((message) => message.role === 'toolResult');
    process.stdout.write(
      `${JSON.stringify({ answer: next.value.event.answer, result: result.content[0].text })}\n`,
    );
    await clientConnection.close();
  });
  await connection.close();
}

main().catch((error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
