import type OpenAI from 'openai';
import type { ModelWire } from '../model-wire';
import { serverOf } from '../endpoint-url';
import { endpointProviderName } from './endpoint-provider';
import { openAiFailureOf } from './openai-failures';
import { toResponsesInput } from './responses-input';
import { assembleResponsesStream } from './responses-stream';

/**
 * OpenAI's Responses API, stateless: nothing is stored on OpenAI's side (`store: false`), so each
 * call sends the whole transcript, and asks for reasoning encrypted to send it back next time.
 */
export function responsesWire(openai: OpenAI): ModelWire {
  return {
    providerName: endpointProviderName(openai.baseURL),
    ...serverOf(openai.baseURL),
    open: (request) => async (signal, onPartial, now) => {
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
    },
    failureOf: openAiFailureOf,
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
