/**
 * The LangGraph peer's service process: LangGraph's prebuilt ReAct agent (`createReactAgent`: a
 * model node and a tool node in a loop) with the same tools, its model the bench model server
 * through LangChain's OpenAI chat model, checkpointed to PostgreSQL (`PostgresSaver`) after every
 * step with `durability: "sync"` (each checkpoint written before the next step starts). A
 * conversation is a thread; each turn one `invoke` with the user's message.
 */
import { tool } from '@langchain/core/tools';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { ChatOpenAI } from '@langchain/openai';
import { z } from 'zod';
import { preciseNow } from '../../support/clock';
import { reportTool, servePeer } from '../../support/protocol';

const reportStart = (name: string, id: string | undefined) =>
  reportTool({ event: 'start', tool: name, toolCallId: id ?? name, at: preciseNow() });

const tools = [
  tool(
    async (_input, config) => {
      reportStart('noop', config.toolCall?.id);
      return 'ok';
    },
    { name: 'noop', description: 'Does nothing and answers ok.', schema: z.object({}) },
  ),
  tool(
    async ({ ms }, config) => {
      reportStart('sleep', config.toolCall?.id);
      await new Promise((resolve) => setTimeout(resolve, ms ?? 500));
      return 'ok';
    },
    {
      name: 'sleep',
      description: 'Waits, then answers ok.',
      schema: z.object({ ms: z.number().int().min(0).max(60_000).optional() }),
    },
  ),
];

const checkpointer = PostgresSaver.fromConnString(process.env.BENCH_DATABASE_URL!);
const agent = createReactAgent({
  llm: new ChatOpenAI({
    model: 'bench-model',
    apiKey: 'bench',
    configuration: { baseURL: process.env.BENCH_MODEL_URL! },
    // Not streamed: LangChain's streamed chat completions never finished against the bench model
    // server here (the same answer as the other stacks get, as server-sent events).
    streaming: false,
    maxRetries: 0,
  }),
  tools,
  checkpointer,
});

void servePeer({
  start: () => checkpointer.setup(),
  // A thread starts with its first turn.
  open: async () => undefined,
  async turn(conversationId, text) {
    await agent.invoke(
      { messages: [{ role: 'user', content: text }] },
      { configurable: { thread_id: conversationId }, durability: 'sync', recursionLimit: 50 },
    );
  },
  stop: () => checkpointer.end(),
});
