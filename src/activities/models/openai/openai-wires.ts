import OpenAI from 'openai';
import type { ModelWires } from '../model-wire';
import { chatCompletionsWire } from './chat-wire';
import type { OpenAiEndpoint } from './openai-settings';
import { responsesWire } from './responses-wire';

/** Temporal's retry policy decides about retries, so the client's own are off. */
export function createOpenAiClient(endpoint: OpenAiEndpoint): OpenAI {
  return new OpenAI({
    baseURL: endpoint.baseURL,
    apiKey: endpoint.apiKey,
    maxRetries: 0,
    timeout: 10 * 60_000,
  });
}

/** Chat Completions and the Responses API, both over one OpenAI client. */
export function openAiWires(openai: OpenAI): ModelWires {
  return { chat: chatCompletionsWire(openai), responses: responsesWire(openai) };
}
