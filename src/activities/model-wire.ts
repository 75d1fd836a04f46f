import type OpenAI from 'openai';
import type { AssistantMessage, Message } from '../shared/messages';
import type { ModelProvider } from '../shared/model-provider';
import { assembleStream, type PartialAnswer } from './model-stream';
import { toOpenAiMessages } from './openai-messages';
import { toResponsesInput } from './responses-input';
import { assembleResponsesStream } from './responses-stream';
import { withProviderToolCallIds } from './tool-call-ids';

/** One model call, in the transcript's own terms: each wire turns it into its API's request. */
export interface WireRequest {
  /** The model name to ask for. */
  model: string;
  /** What the endpoint serves, for what differs between providers on Chat Completions. */
  provider: ModelProvider;
  /** Sent before the transcript; none when absent. */
  systemPrompt?: string;
  /** The whole transcript, oldest first. */
  messages: Message[];
  /** The tools offered, as Chat Completions function tools (each wire reshapes them for its API). */
  tools: OpenAI.Chat.Completions.ChatCompletionTool[];
}

/**
 * A model call's stream: opened with the activity's abort signal, each partial answer reported as
 * it arrives, the whole answer returned when the stream ends. Failures are the client library's own
 * errors (APIError and the like), classified by the caller.
 */
export type ModelStream = (
  signal: AbortSignal,
  onPartial: (partial: PartialAnswer) => void,
  now: () => number,
) => Promise<AssistantMessage>;

/** An API the model is called through: Chat Completions, the Responses API, Anthropic's Messages API. */
export type ModelWire = (request: WireRequest) => ModelStream;

/** Chat Completions, as every OpenAI-compatible endpoint serves it. */
export function chatCompletionsWire(openai: OpenAI): ModelWire {
  return (request) => async (signal, onPartial, now) => {
    const stream = await openai.chat.completions.create(
      {
        model: request.model,
        messages: withProviderToolCallIds(
          toOpenAiMessages(request.messages, request.systemPrompt, request.provider),
          request.provider,
        ),
        ...(request.tools.length ? { tools: request.tools } : {}),
        stream: true,
        stream_options: { include_usage: true },
      },
      { signal },
    );
    return assembleStream(stream, onPartial, now);
  };
}

/**
 * OpenAI's Responses API, stateless: nothing is stored on OpenAI's side (`store: false`), so each
 * call sends the whole transcript, and asks for reasoning encrypted to send it back next time.
 */
export function responsesWire(openai: OpenAI): ModelWire {
  return (request) => async (signal, onPartial, now) => {
    const stream = await openai.responses.create(
      {
        model: request.model,
        ...(request.systemPrompt ? { instructions: request.systemPrompt } : {}),
        input: toResponsesInput(request.messages),
        ...(request.tools.length ? { tools: request.tools.map(responsesTool) } : {}),
        store: false,
        include: ['reasoning.encrypted_content'],
        stream: true,
      },
      { signal },
    );
    return assembleResponsesStream(stream, onPartial, now);
  };
}

/** A Chat Completions function tool as the Responses API takes it (flat, schema not strict). */
function responsesTool(tool: OpenAI.Chat.Completions.ChatCompletionTool): OpenAI.Responses.FunctionTool {
  if (tool.type !== 'function') throw new Error(`the Responses API takes function tools, not ${tool.type}`);
  const { name, description, parameters } = tool.function;
  return {
    type: 'function',
    name,
    ...(description !== undefined ? { description } : {}),
    parameters: parameters ?? { type: 'object', properties: {} },
    strict: false,
  };
}
