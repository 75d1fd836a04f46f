import type OpenAI from 'openai';
import type { ModelWire } from '../model-wire';
import { toOpenAiMessages } from './chat-messages';
import { assembleStream } from './chat-stream';
import { withProviderToolCallIds } from './chat-tool-call-ids';
import { serverOf } from '../endpoint-url';
import { endpointProviderName } from './endpoint-provider';
import { openAiFailureOf } from './openai-failures';

/** Chat Completions, as every OpenAI-compatible endpoint serves it. */
export function chatCompletionsWire(openai: OpenAI): ModelWire {
  return {
    providerName: endpointProviderName(openai.baseURL),
    ...serverOf(openai.baseURL),
    open: (request) => async (signal, onPartial, now) => {
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
    },
    failureOf: openAiFailureOf,
  };
}
