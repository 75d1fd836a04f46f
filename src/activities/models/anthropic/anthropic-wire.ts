import Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import type { ModelWire, ModelWires } from '../model-wire';
import { serverOf } from '../endpoint-url';
import { anthropicFailureOf } from './anthropic-failures';
import { EPHEMERAL, toAnthropicMessages } from './anthropic-messages';
import type { AnthropicSettings } from './anthropic-settings';
import { assembleAnthropicStream } from './anthropic-stream';

/** The answer's room when no limit is set: `max_tokens` is required by the Messages API. */
const DEFAULT_MAX_TOKENS = 8192;

/** Anthropic's Messages API over a client of its own (Temporal's retry policy decides about retries). */
export function anthropicWires(settings: AnthropicSettings): ModelWires {
  const { apiKey, baseURL, thinkingBudgetTokens } = settings;
  const client = new Anthropic({
    apiKey,
    ...(baseURL ? { baseURL } : {}),
    maxRetries: 0,
    timeout: 10 * 60_000,
  });
  return { anthropic: anthropicWire(client, thinkingBudgetTokens ? { thinkingBudgetTokens } : {}) };
}

export interface AnthropicWireSettings {
  /** The answer's limit in tokens (thinking included); 8192 when unset. */
  maxTokens?: number;
  /** Extended thinking's budget in tokens; no extended thinking when unset. */
  thinkingBudgetTokens?: number;
}

/**
 * Anthropic's Messages API. Prompt caching takes three of the four breakpoints the API allows: the
 * system prompt, the last tool (so all tools), and the last block of the transcript (the prefix the
 * next call of a tool loop starts with).
 */
export function anthropicWire(client: Anthropic, settings: AnthropicWireSettings = {}): ModelWire {
  const budget = settings.thinkingBudgetTokens;
  const asked = settings.maxTokens ?? DEFAULT_MAX_TOKENS;
  // The API wants the thinking budget below max_tokens; an answer needs room beyond its thinking.
  const maxTokens = budget !== undefined && asked <= budget ? budget + DEFAULT_MAX_TOKENS : asked;
  return {
    providerName: 'anthropic',
    ...serverOf(client.baseURL),
    open: (request) => async (signal, onPartial, now) => {
      const tools = toAnthropicTools(request.tools);
      const stream = await client.messages.create(
        {
          model: request.model,
          max_tokens: maxTokens,
          ...(request.systemPrompt
            ? { system: [{ type: 'text', text: request.systemPrompt, cache_control: EPHEMERAL }] }
            : {}),
          ...(tools.length ? { tools } : {}),
          messages: toAnthropicMessages(request.messages),
          ...(budget !== undefined ? { thinking: { type: 'enabled', budget_tokens: budget } } : {}),
          stream: true,
        },
        { signal },
      );
      return assembleAnthropicStream(stream, onPartial, now);
    },
    failureOf: anthropicFailureOf,
  };
}

/** Chat Completions function tools as Messages API tools, the last one a cache breakpoint. */
export function toAnthropicTools(tools: OpenAI.Chat.Completions.ChatCompletionTool[]): Anthropic.Tool[] {
  const out = tools.flatMap((tool): Anthropic.Tool[] =>
    tool.type === 'function'
      ? [
          {
            name: tool.function.name,
            ...(tool.function.description ? { description: tool.function.description } : {}),
            input_schema: { type: 'object', ...tool.function.parameters },
          },
        ]
      : [],
  );
  const last = out.at(-1);
  if (last) out[out.length - 1] = { ...last, cache_control: EPHEMERAL };
  return out;
}
