import type OpenAI from 'openai';
import type { AssistantMessage, ToolCall, Usage } from '../shared/messages';

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;

export interface PartialAnswer {
  text: string;
  toolCalls: number;
}

/** Assembles a streamed chat completion: text deltas are joined, tool-call deltas gathered by index. */
export async function assembleStream(
  stream: AsyncIterable<Chunk>,
  onPartial: (partial: PartialAnswer) => void,
  now: () => number,
): Promise<AssistantMessage> {
  let text = '';
  let model = '';
  let finishReason: string | null = null;
  let usage: Usage | undefined;
  const calls = new Map<number, { id: string; name: string; arguments: string }>();

  for await (const chunk of stream) {
    model ||= chunk.model;
    if (chunk.usage)
      usage = { inputTokens: chunk.usage.prompt_tokens, outputTokens: chunk.usage.completion_tokens };
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    finishReason = choice.finish_reason ?? finishReason;
    const delta = choice.delta;
    if (delta?.content) text += delta.content;
    for (const part of delta?.tool_calls ?? []) {
      const call = calls.get(part.index) ?? { id: '', name: '', arguments: '' };
      if (part.id) call.id = part.id;
      if (part.function?.name) call.name += part.function.name;
      if (part.function?.arguments) call.arguments += part.function.arguments;
      calls.set(part.index, call);
    }
    onPartial({ text, toolCalls: calls.size });
  }

  const toolCalls: ToolCall[] = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, call]) => ({ type: 'toolCall', id: call.id, name: call.name, arguments: call.arguments }));
  return {
    role: 'assistant',
    content: [...(text ? [{ type: 'text' as const, text }] : []), ...toolCalls],
    stopReason: toolCalls.length
      ? 'toolUse'
      : finishReason === 'length'
        ? 'length'
        : finishReason === 'content_filter'
          ? 'contentFilter'
          : 'stop',
    model,
    usage,
    timestamp: now(),
  };
}
