// The AI SDK's polyfills (Headers, web streams, structuredClone) come first in the bundle: the
// AiSdkPlugin puts them there when the worker bundles this file (worker.ts).
import { temporalProvider } from '@temporalio/ai-sdk/workflow';
import { condition, defineQuery, defineSignal, proxyActivities, setHandler } from '@temporalio/workflow';
import { type ModelMessage, generateText, jsonSchema, stepCountIs, tool } from 'ai';
import type * as activities from './activities';
import { ensureSandboxGlobals } from './sandbox-globals';

export const userMessageSignal = defineSignal<[{ text: string }]>('userMessage');
export const endSignal = defineSignal('end');
export const turnsQuery = defineQuery<number>('turns');

const { runTool } = proxyActivities<typeof activities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 3 },
});

const tools = {
  noop: tool({
    description: 'Does nothing and answers ok.',
    inputSchema: jsonSchema<Record<string, never>>({ type: 'object', properties: {} }),
    execute: () => runTool('noop', {}),
  }),
  sleep: tool({
    description: 'Waits, then answers ok.',
    inputSchema: jsonSchema<{ ms?: number }>({ type: 'object', properties: { ms: { type: 'integer' } } }),
    execute: (input) => runTool('sleep', input),
  }),
};

/**
 * The same conversation loop as durable-agent's, the way @temporalio/ai-sdk is meant to be used:
 * the transcript lives in workflow state, each user message (a signal) starts a run, and
 * `generateText` with the Temporal provider calls the model as an activity (`invokeModel`) and the
 * tools as activities until the model answers without tool calls.
 */
export async function peerConversation(): Promise<number> {
  const messages: ModelMessage[] = [];
  const queue: string[] = [];
  let turns = 0;
  let ended = false;
  setHandler(userMessageSignal, ({ text }) => {
    queue.push(text);
  });
  setHandler(endSignal, () => {
    ended = true;
  });
  setHandler(turnsQuery, () => turns);
  for (;;) {
    await condition(() => queue.length > 0 || ended);
    if (queue.length === 0) return turns;
    for (const text of queue.splice(0)) messages.push({ role: 'user', content: text });
    ensureSandboxGlobals();
    const result = await generateText({
      model: temporalProvider.languageModel('bench-model'),
      messages,
      tools,
      stopWhen: stepCountIs(20),
    });
    messages.push(...result.response.messages);
    turns++;
  }
}
