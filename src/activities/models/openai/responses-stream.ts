import type OpenAI from 'openai';
import type { TextContent, ThinkingContent } from '../../../shared/content';
import type { AssistantMessage, ToolCall, Usage } from '../../../shared/messages';
import type { PartialAnswer } from '../model-wire';
import { refusalWords } from '../refusal';

type StreamEvent = OpenAI.Responses.ResponseStreamEvent;
type Response = OpenAI.Responses.Response;

type OutputPart = TextContent | ThinkingContent | ToolCall;

/**
 * Assembles a streamed Responses API call: text from its deltas, function calls from their output
 * items (their `call_id` is the tool call's id), reasoning items kept whole (id, encrypted content,
 * summary) as thinking for the next call of a tool loop, usage with cached and reasoning tokens.
 * The parts keep the order of the response's output items: sent back, each reasoning item must be
 * followed by the item the model wrote after it, or the API refuses the request.
 * Refusal parts (`response.refusal.delta`/`.done`, or a message item's `refusal` content) are kept
 * apart from the answer: a response without function calls then stopped for `refusal`, in the
 * model's words. A failed response, or an error event, throws with the provider's message.
 */
export async function assembleResponsesStream(
  events: AsyncIterable<StreamEvent>,
  onPartial: (partial: PartialAnswer) => void,
  now: () => number,
): Promise<AssistantMessage> {
  let text = '';
  let thinkingLength = 0;
  const parts = new Map<number, TextContent | ThinkingContent>();
  const calls = new Map<string, ToolCall & { order: number }>();
  const refusals = new Map<string, string>();
  let finished: Response | undefined;

  for await (const event of events) {
    switch (event.type) {
      case 'response.output_text.delta': {
        text += event.delta;
        const part = parts.get(event.output_index);
        if (part?.type === 'text') part.text += event.delta;
        else
          parts.set(event.output_index, {
            type: 'text',
            text: event.delta,
            responseItem: { id: event.item_id },
          });
        break;
      }
      case 'response.refusal.delta': {
        const part = `${event.item_id}/${event.content_index}`;
        refusals.set(part, (refusals.get(part) ?? '') + event.delta);
        break;
      }
      case 'response.refusal.done':
        refusals.set(`${event.item_id}/${event.content_index}`, event.refusal);
        break;
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        thinkingLength += event.delta.length;
        break;
      case 'response.output_item.added':
        if (event.item.type === 'function_call')
          calls.set(event.item.id ?? event.item.call_id, callOf(event.item, event.output_index));
        break;
      case 'response.function_call_arguments.delta': {
        const call = calls.get(event.item_id);
        if (call) call.arguments += event.delta;
        break;
      }
      case 'response.output_item.done':
        if (event.item.type === 'message') {
          keepMessageItem(parts.get(event.output_index), event.item);
          keepRefusals(refusals, event.item);
        } else if (event.item.type === 'function_call')
          calls.set(event.item.id ?? event.item.call_id, callOf(event.item, event.output_index));
        else if (event.item.type === 'reasoning') parts.set(event.output_index, thinkingOf(event.item));
        break;
      case 'response.completed':
      case 'response.incomplete':
        finished = event.response;
        break;
      case 'response.failed':
        throw new Error(`the model's response failed: ${event.response.error?.message ?? 'no reason given'}`);
      case 'error':
        throw new Error(`the model endpoint sent an error: ${event.message}`);
      default:
        continue;
    }
    onPartial({ text, toolCalls: calls.size, thinkingLength });
  }
  if (!finished) throw new Error('the model endpoint ended the stream before the response completed');

  const toolCalls = [...calls.values()].map(({ order, ...call }): [number, ToolCall] => [
    order,
    { ...call, arguments: call.arguments.trim() ? call.arguments : '{}' },
  ]);
  const content = [...parts.entries(), ...toolCalls]
    .sort(([a], [b]) => a - b)
    .map(([, part]): OutputPart => part);
  const refused = calls.size === 0 && refusals.size > 0;
  const refusal = refused ? refusalWords([...refusals.values()].join('\n')) : undefined;
  return {
    role: 'assistant',
    content,
    stopReason: refused ? 'refusal' : stopReasonOf(finished, calls.size > 0),
    ...(refusal !== undefined ? { refusal } : {}),
    model: finished.model,
    ...(finished.usage ? { usage: usageOf(finished.usage) } : {}),
    timestamp: now(),
  };
}

/** The output message's id, phase and whether it was cut off, on the text streamed from it, to be sent back with it. */
function keepMessageItem(
  part: TextContent | ThinkingContent | undefined,
  item: OpenAI.Responses.ResponseOutputMessage,
): void {
  if (part?.type !== 'text' || !item.id) return;
  part.responseItem = {
    id: item.id,
    ...(item.phase ? { phase: item.phase } : {}),
    ...(item.status === 'incomplete' ? { incomplete: true as const } : {}),
  };
}

/** A finished message item's refusal parts, whole (what its deltas said, when they came, is replaced). */
function keepRefusals(refusals: Map<string, string>, item: OpenAI.Responses.ResponseOutputMessage): void {
  item.content.forEach((part, index) => {
    if (part.type === 'refusal') refusals.set(`${item.id}/${index}`, part.refusal);
  });
}

function callOf(
  item: OpenAI.Responses.ResponseFunctionToolCall,
  order: number,
): ToolCall & { order: number } {
  return { type: 'toolCall', id: item.call_id, name: item.name, arguments: item.arguments ?? '', order };
}

function thinkingOf(item: OpenAI.Responses.ResponseReasoningItem): ThinkingContent {
  const summary = item.summary.map((part) => part.text).join('\n\n');
  return {
    type: 'thinking',
    thinking: summary,
    reasoningItem: {
      id: item.id,
      ...(item.encrypted_content ? { encryptedContent: item.encrypted_content } : {}),
    },
  };
}

function usageOf(usage: OpenAI.Responses.ResponseUsage): Usage {
  const cached = usage.input_tokens_details?.cached_tokens;
  const reasoning = usage.output_tokens_details?.reasoning_tokens;
  return {
    inputTokens: usage.input_tokens,
    outputTokens: usage.output_tokens,
    ...(typeof cached === 'number' ? { cachedInputTokens: cached } : {}),
    ...(typeof reasoning === 'number' && reasoning > 0 ? { reasoningTokens: reasoning } : {}),
  };
}

function stopReasonOf(response: Response, calledTools: boolean): AssistantMessage['stopReason'] {
  if (calledTools) return 'toolUse';
  const reason = response.incomplete_details?.reason;
  if (reason === 'max_output_tokens') return 'length';
  if (reason === 'content_filter') return 'contentFilter';
  return 'stop';
}
