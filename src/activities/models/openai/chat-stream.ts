import type OpenAI from 'openai';
import type { AssistantMessage, ToolCall, Usage } from '../../../shared/messages';
import type { PartialAnswer } from '../model-wire';
import { refusalWords } from '../refusal';

type Chunk = OpenAI.Chat.Completions.ChatCompletionChunk;

/**
 * A delta as OpenAI-compatible providers really send it: `content` may be an array of typed parts
 * (Mistral's reasoning models), reasoning arrives beside it as `reasoning_content` (DeepSeek, vLLM,
 * xAI) or `reasoning` (OpenRouter, Ollama, Groq, newer vLLM), and a tool call may lack its `index`
 * (Gemini, older Ollama). See test/fixtures/provider-streams/README.md.
 */
interface ProviderDelta {
  content?: string | ContentPart[] | null;
  /** OpenAI: the model's refusal, in place of an answer. */
  refusal?: string | null;
  reasoning_content?: string | null;
  reasoning?: string | null;
  tool_calls?: ToolCallDelta[] | null;
}

interface ContentPart {
  type?: string;
  text?: string;
  /** Mistral: `{ type: 'thinking', thinking: [{ type: 'text', text }] }`. */
  thinking?: string | ContentPart[];
}

interface ToolCallDelta {
  index?: number | null;
  id?: string | null;
  function?: { name?: string | null; arguments?: string | null } | null;
  /** Gemini: the call's thought signature, on the call or in a piece of its own. */
  extra_content?: { google?: { thought_signature?: string } };
}

/** Groq also reports usage inside `x_groq` on the last chunk. */
interface ProviderChunk {
  usage?: Chunk['usage'];
  x_groq?: { usage?: Chunk['usage'] };
}

/**
 * Assembles a streamed chat completion: answer text and thinking gathered apart, tool-call deltas
 * gathered into calls (by index, or by id where a provider sends no index), and a refusal (OpenAI's
 * `refusal` deltas) kept apart from the answer: the call then stopped for `refusal`, in the model's words.
 */
export async function assembleStream(
  stream: AsyncIterable<Chunk>,
  onPartial: (partial: PartialAnswer) => void,
  now: () => number,
): Promise<AssistantMessage> {
  let text = '';
  let thinking = '';
  let refused = '';
  let model = '';
  let finishReason: string | null = null;
  let usage: Usage | undefined;
  const calls = new ToolCallGatherer();

  for await (const chunk of stream) {
    model ||= chunk.model;
    usage = usageOf(chunk) ?? usage;
    // Azure's prompt_filter_results, a usage-only last chunk: no choice, nothing to gather.
    const choice = chunk.choices?.[0];
    if (!choice) continue;
    finishReason = choice.finish_reason ?? finishReason;
    const delta = (choice.delta ?? {}) as ProviderDelta;
    const pieces = contentPieces(delta.content);
    text += pieces.text;
    thinking += pieces.thinking + reasoningOf(delta);
    if (typeof delta.refusal === 'string') refused += delta.refusal;
    for (const part of delta.tool_calls ?? []) calls.add(part);
    onPartial({ text, toolCalls: calls.count, thinkingLength: thinking.length });
  }

  const toolCalls = calls.done();
  // A refusal is the answer only when the model called no tools.
  const refusedAnswer = toolCalls.length === 0 && refused !== '';
  const refusal = refusedAnswer ? refusalWords(refused) : undefined;
  return {
    role: 'assistant',
    content: [
      ...(thinking ? [{ type: 'thinking' as const, thinking }] : []),
      ...(text ? [{ type: 'text' as const, text }] : []),
      ...toolCalls,
    ],
    stopReason: refusedAnswer ? 'refusal' : stopReasonOf(finishReason, toolCalls.length > 0),
    ...(refusal !== undefined ? { refusal } : {}),
    model,
    usage,
    timestamp: now(),
  };
}

function usageOf(chunk: Chunk): Usage | undefined {
  const { usage, x_groq } = chunk as ProviderChunk;
  const reported = usage ?? x_groq?.usage;
  if (!reported) return undefined;
  const cached = reported.prompt_tokens_details?.cached_tokens;
  const reasoning = reported.completion_tokens_details?.reasoning_tokens;
  return {
    inputTokens: reported.prompt_tokens,
    outputTokens: reported.completion_tokens,
    // OpenAI, Azure, Gemini, DeepSeek (also as prompt_cache_hit_tokens), Groq, xAI say what their cache served.
    ...(typeof cached === 'number' ? { cachedInputTokens: cached } : cacheHitsOf(reported)),
    ...(typeof reasoning === 'number' && reasoning > 0 ? { reasoningTokens: reasoning } : {}),
  };
}

/** DeepSeek's own name for cached input, where it sends no `prompt_tokens_details`. */
function cacheHitsOf(usage: object): Pick<Usage, 'cachedInputTokens'> {
  const hits = (usage as { prompt_cache_hit_tokens?: unknown }).prompt_cache_hit_tokens;
  return typeof hits === 'number' ? { cachedInputTokens: hits } : {};
}

/** A content delta's answer text and thinking: a string is all text; typed parts say which is which. */
function contentPieces(content: ProviderDelta['content']): { text: string; thinking: string } {
  if (typeof content === 'string') return { text: content, thinking: '' };
  let text = '';
  let thinking = '';
  for (const part of Array.isArray(content) ? content : []) {
    if (part?.type === 'text' && typeof part.text === 'string') text += part.text;
    else if (part?.type === 'thinking') thinking += thinkingText(part.thinking);
    // Anything else (references, images) is not the answer's text.
  }
  return { text, thinking };
}

function thinkingText(thinking: ContentPart['thinking']): string {
  if (typeof thinking === 'string') return thinking;
  return (thinking ?? []).map((part) => (typeof part?.text === 'string' ? part.text : '')).join('');
}

/** `reasoning_content` (DeepSeek, vLLM, xAI) or `reasoning` (OpenRouter, Ollama, Groq); never both counted. */
function reasoningOf(delta: ProviderDelta): string {
  if (typeof delta.reasoning_content === 'string') return delta.reasoning_content;
  return typeof delta.reasoning === 'string' ? delta.reasoning : '';
}

function stopReasonOf(finishReason: string | null, calledTools: boolean): AssistantMessage['stopReason'] {
  // Gemini ends a streamed tool call with "stop": the calls themselves say what happened.
  if (calledTools) return 'toolUse';
  if (finishReason === 'length') return 'length';
  if (finishReason === 'content_filter') return 'contentFilter';
  return 'stop';
}

interface GatheredCall {
  /** Where the call goes among the others: its index, or the order it came in when it had none. */
  order: number;
  id: string;
  name: string;
  arguments: string;
  thoughtSignature?: string;
}

/**
 * Tool-call deltas into whole calls. With an `index` (from 0 or from 1, as it comes) the index says
 * which call a piece belongs to. Without one, a piece carrying an id other than the last call's
 * starts a new call, and one without an id continues the last.
 */
class ToolCallGatherer {
  private readonly calls: GatheredCall[] = [];
  private readonly byIndex = new Map<number, GatheredCall>();

  get count(): number {
    return this.calls.length;
  }

  add(part: ToolCallDelta): void {
    const call = typeof part.index === 'number' ? this.indexed(part.index) : this.unindexed(part.id);
    if (part.id && !call.id) call.id = part.id;
    if (part.function?.name) call.name += part.function.name;
    if (part.function?.arguments) call.arguments += part.function.arguments;
    const signature = part.extra_content?.google?.thought_signature;
    if (signature) call.thoughtSignature = signature;
  }

  /** The calls in order; no arguments at all are an empty object. */
  done(): ToolCall[] {
    return [...this.calls]
      .sort((a, b) => a.order - b.order)
      .map((call) => ({
        type: 'toolCall',
        id: call.id,
        name: call.name,
        arguments: call.arguments.trim() ? call.arguments : '{}',
        ...(call.thoughtSignature ? { thoughtSignature: call.thoughtSignature } : {}),
      }));
  }

  private indexed(index: number): GatheredCall {
    let call = this.byIndex.get(index);
    if (!call) {
      call = this.start(index);
      this.byIndex.set(index, call);
    }
    return call;
  }

  private unindexed(id: string | null | undefined): GatheredCall {
    const last = this.calls.at(-1);
    const startsAnother = !last || (id && last.id && id !== last.id);
    return startsAnother ? this.start(this.calls.length) : last;
  }

  private start(order: number): GatheredCall {
    const call = { order, id: '', name: '', arguments: '' };
    this.calls.push(call);
    return call;
  }
}
