import { type SummarizeInput, type SummaryResult, SUMMARY_SYSTEM_PROMPT } from '../shared/compaction';
import { type Message, textOf } from '../shared/messages';
import { type ModelDeps, wireFor } from './call-model';
import { modelProviderOf } from '../shared/model-provider';
import type { WireRequest } from './models/model-wire';
import { streamedModelCall } from './models/streamed-model-call';
import { rebuildTranscript } from './transcript-rebuild';
import { pricedUsage } from '../shared/model-prices';

/** Each message is cut to this many characters, and the whole text to the last MAX_INPUT_CHARS. */
const MESSAGE_CHARS = 4_000;
const MAX_INPUT_CHARS = 400_000;

export function createSummarizeTranscript(deps: ModelDeps) {
  const streamOptions = {
    ...(deps.streamTimeouts ? { timeouts: deps.streamTimeouts } : {}),
    ...(deps.limiter ? { limiter: deps.limiter } : {}),
  };
  /**
   * The model's summary of messages [0, upTo): plain text, rendered so no tool call structure is
   * needed; with the tokens it cost when the workflow asks `withUsage` (one of an older version
   * takes the text alone).
   */
  return async function summarizeTranscript(input: SummarizeInput): Promise<string | SummaryResult> {
    const daily = deps.dailyLedger?.gateFor(input.agentId);
    const messages = await rebuildTranscript(input.transcript, deps);
    const model = input.model ?? deps.defaultModel;
    const wire = wireFor(input.api ?? deps.api ?? 'chat', deps.wires);
    const request: WireRequest = {
      model,
      provider: deps.provider ?? modelProviderOf(model),
      systemPrompt: SUMMARY_SYSTEM_PROMPT,
      messages: [
        {
          role: 'user',
          content: renderForSummary(messages.slice(0, input.upTo)),
          messageId: 'summary-request',
          timestamp: 0,
        },
      ],
      tools: [],
    };
    const reply = await streamedModelCall(wire, request, streamOptions);
    const summary = textOf(reply).trim();
    await daily?.report(reply.usage);
    if (!summary) throw new Error('the model returned an empty summary');
    if (!input.withUsage) return summary;
    const usage = reply.usage && pricedUsage(reply.usage, deps.prices, [model, reply.model]);
    return { summary, ...(usage ? { usage } : {}) };
  };
}

/** The messages as a plain-text transcript, newest kept when it is too long. */
export function renderForSummary(messages: Message[]): string {
  const cut = (text: string) => (text.length > MESSAGE_CHARS ? `${text.slice(0, MESSAGE_CHARS)} […]` : text);
  const lines = messages.map((message) => {
    switch (message.role) {
      case 'user':
        return `USER: ${cut(message.content)}`;
      case 'assistant': {
        const calls = message.content.flatMap((block) =>
          block.type === 'toolCall' ? [`${block.name}(${cut(block.arguments)})`] : [],
        );
        const text = textOf(message);
        return `ASSISTANT: ${cut(text)}${calls.length ? ` [called ${calls.join(', ')}]` : ''}`;
      }
      case 'toolResult': {
        const text = message.content
          .map((block) => (block.type === 'text' ? block.text : '[image]'))
          .join('\n');
        return `TOOL ${message.toolName}${message.isError ? ' (error)' : ''}: ${cut(text)}`;
      }
    }
  });
  const text = lines.join('\n\n');
  return text.length > MAX_INPUT_CHARS ? `[…]\n${text.slice(-MAX_INPUT_CHARS)}` : text;
}
