import type Anthropic from '@anthropic-ai/sdk';
import type { ThinkingContent } from '../../../shared/content';
import type { AssistantMessage, ToolCall, Usage } from '../../../shared/messages';
import type { PartialAnswer } from '../model-wire';
import { refusalWords } from '../refusal';

/**
 * An event of a Messages API stream. The SDK drops `ping` and throws on `error` itself; both are
 * here for a stream read from elsewhere (a recording, a proxy).
 */
export type AnthropicStreamEvent =
  | Anthropic.RawMessageStreamEvent
  | { type: 'ping' }
  | { type: 'error'; error: { type: string; message: string } };

/** A content block as it streams in, by its index. */
type Gathered =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; json: string; input: unknown }
  | { type: 'other' };

/**
 * Assembles a streamed Messages API answer: thinking (with its signature, or redacted) first, in
 * the order it came, then the text, then the tool calls; a `refusal` stop with the explanation its
 * `stop_details` gave (or, without one, the policy category it named). Throws on an `error` event, and when the
 * stream ends before `message_stop` (a dropped connection, or an abort the SDK ends quietly): the
 * answer is incomplete either way.
 */
export async function assembleAnthropicStream(
  events: AsyncIterable<AnthropicStreamEvent>,
  onPartial: (partial: PartialAnswer) => void,
  now: () => number,
): Promise<AssistantMessage> {
  const blocks = new Map<number, Gathered>();
  let model = '';
  let stopReason: Anthropic.StopReason | null = null;
  let stopDetails: Anthropic.RefusalStopDetails | null = null;
  let usage: Anthropic.Usage | undefined;
  let delta: Anthropic.MessageDeltaUsage | undefined;
  let text = '';
  let thinkingLength = 0;
  let toolCalls = 0;
  let stopped = false;

  for await (const event of events) {
    switch (event.type) {
      case 'message_start':
        model = event.message.model;
        usage = event.message.usage;
        break;
      case 'content_block_start': {
        const block = gatheredOf(event.content_block);
        blocks.set(event.index, block);
        if (block.type === 'text') text += block.text;
        if (block.type === 'thinking') thinkingLength += block.thinking.length;
        if (block.type === 'tool_use') toolCalls++;
        break;
      }
      case 'content_block_delta': {
        const block = blocks.get(event.index);
        const piece = event.delta;
        if (piece.type === 'text_delta' && block?.type === 'text') {
          block.text += piece.text;
          text += piece.text;
        } else if (piece.type === 'thinking_delta' && block?.type === 'thinking') {
          block.thinking += piece.thinking;
          thinkingLength += piece.thinking.length;
        } else if (piece.type === 'signature_delta' && block?.type === 'thinking') {
          block.signature += piece.signature;
        } else if (piece.type === 'input_json_delta' && block?.type === 'tool_use') {
          block.json += piece.partial_json;
        }
        // Citations and deltas of blocks not started are not part of the answer.
        break;
      }
      case 'message_delta':
        stopReason = event.delta.stop_reason ?? stopReason;
        stopDetails = event.delta.stop_details ?? stopDetails;
        delta = event.usage;
        break;
      case 'message_stop':
        stopped = true;
        break;
      case 'error':
        throw new Error(`the model endpoint sent an error: ${event.error.type}: ${event.error.message}`);
      case 'content_block_stop':
      case 'ping':
        break;
    }
    onPartial({ text, toolCalls, thinkingLength });
  }
  if (!stopped) throw new Error('the model endpoint ended the stream before message_stop');

  const ordered = [...blocks.entries()].sort(([a], [b]) => a - b).map(([, block]) => block);
  return {
    role: 'assistant',
    content: [
      ...ordered.flatMap(thinkingOf),
      ...(text ? [{ type: 'text' as const, text }] : []),
      ...ordered.flatMap(toolCallOf),
    ],
    stopReason: stopReasonOf(stopReason),
    ...refusalOf(stopReason, stopDetails),
    model,
    ...(usage ? { usage: usageOf(usage, delta) } : {}),
    timestamp: now(),
  };
}

/** Why a refused answer was refused: the explanation, else the category; nothing for an answer not refused. */
function refusalOf(
  reason: Anthropic.StopReason | null,
  details: Anthropic.RefusalStopDetails | null,
): { refusal?: string } {
  if (reason !== 'refusal' || !details) return {};
  const refusal = refusalWords(
    details.explanation ?? (details.category ? `declined (${details.category})` : undefined),
  );
  return refusal !== undefined ? { refusal } : {};
}

function gatheredOf(block: Anthropic.RawContentBlockStartEvent['content_block']): Gathered {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'thinking':
      return { type: 'thinking', thinking: block.thinking, signature: block.signature };
    case 'redacted_thinking':
      return { type: 'redacted_thinking', data: block.data };
    case 'tool_use':
      return { type: 'tool_use', id: block.id, name: block.name, json: '', input: block.input };
    default:
      // Server tools' blocks: not offered, so not expected.
      return { type: 'other' };
  }
}

function thinkingOf(block: Gathered): ThinkingContent[] {
  if (block.type === 'thinking') {
    return [
      {
        type: 'thinking',
        thinking: block.thinking,
        ...(block.signature ? { signature: block.signature } : {}),
      },
    ];
  }
  if (block.type === 'redacted_thinking') return [{ type: 'thinking', thinking: '', redacted: block.data }];
  return [];
}

/** The arguments as the JSON text streamed; `{}` when none came. */
function toolCallOf(block: Gathered): ToolCall[] {
  if (block.type !== 'tool_use') return [];
  const started = block.input && typeof block.input === 'object' && Object.keys(block.input).length > 0;
  const args = block.json.trim() ? block.json : started ? JSON.stringify(block.input) : '{}';
  return [{ type: 'toolCall', id: block.id, name: block.name, arguments: args }];
}

/**
 * Our usage from Anthropic's. Its `input_tokens` leaves out what the cache served and what was
 * written to it; ours counts all the model read. `message_delta` carries the totals (output tokens,
 * and input tokens where it says them again), `message_start` the rest.
 */
function usageOf(start: Anthropic.Usage, end: Anthropic.MessageDeltaUsage | undefined): Usage {
  const read = end?.cache_read_input_tokens ?? start.cache_read_input_tokens ?? 0;
  const written = end?.cache_creation_input_tokens ?? start.cache_creation_input_tokens ?? 0;
  const input = end?.input_tokens ?? start.input_tokens;
  const thinking = (end?.output_tokens_details ?? start.output_tokens_details)?.thinking_tokens;
  return {
    inputTokens: input + read + written,
    outputTokens: end?.output_tokens ?? start.output_tokens,
    cachedInputTokens: read,
    cacheWriteTokens: written,
    ...(typeof thinking === 'number' && thinking > 0 ? { reasoningTokens: thinking } : {}),
  };
}

function stopReasonOf(reason: Anthropic.StopReason | null): AssistantMessage['stopReason'] {
  switch (reason) {
    case 'tool_use':
      return 'toolUse';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'refusal':
      return 'refusal';
    default:
      return 'stop';
  }
}
