/**
 * The least a durable turn loop on Temporal can do: the transcript in workflow state, the whole of
 * it passed to a model-call activity, each tool call an activity. No events, approvals, steering,
 * policies or payload codec. The gap between this and durable-agent is durable-agent's own cost;
 * the gap between this and the in-process floor is Temporal's.
 */
import { condition, defineQuery, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import type { Message, ToolCall } from '../../src/shared/messages';
import type { LoopSteps } from './loop-steps';

export const bareMessageSignal = defineSignal<[{ text: string }]>('userMessage');

const { callModel, runTool } = proxyActivities<LoopSteps>({ startToCloseTimeout: '1 minute' });

export async function bareConversation(): Promise<void> {
  const transcript: Message[] = [];
  const queue: string[] = [];
  setHandler(bareMessageSignal, ({ text }) => {
    queue.push(text);
  });
  for (;;) {
    await condition(() => queue.length > 0);
    for (const text of queue.splice(0)) {
      transcript.push({
        role: 'user',
        content: text,
        messageId: String(transcript.length),
        timestamp: Date.now(),
      });
    }
    for (;;) {
      const reply = await callModel(transcript);
      transcript.push(reply);
      const calls = reply.content.filter((block): block is ToolCall => block.type === 'toolCall');
      if (calls.length === 0) break;
      transcript.push(...(await Promise.all(calls.map((call) => runTool(call)))));
    }
  }
}

export const idleReadyQuery = defineQuery<boolean>('ready');

/**
 * The least a cached workflow can be on Temporal's TypeScript SDK: no state, no activities, a query
 * and a wait that never ends. What a worker holds per cached workflow of this kind is the SDK's own
 * floor, under any conversation built on it.
 */
export async function idleWorkflow(): Promise<void> {
  setHandler(idleReadyQuery, () => true);
  await condition(() => false);
}
