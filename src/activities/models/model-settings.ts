import { type ModelApi, ModelApiSchema } from '../../shared/model-api';
import type { ModelProvider } from '../../shared/model-provider';
import {
  type AnthropicSettings,
  DEFAULT_ANTHROPIC_MODEL,
  anthropicSettingsFromEnv,
} from './anthropic/anthropic-settings';
import { openAiEndpointFromEnv } from './openai/openai-settings';

/** Which endpoint and model the worker calls, and through which API. */
export interface ModelSettings {
  /** The OpenAI-compatible endpoint's base URL (OPENAI_BASE_URL); OpenAI's when absent. */
  baseURL?: string;
  /** The OpenAI-compatible endpoint's API key (OPENAI_API_KEY); a placeholder for an endpoint that needs none. */
  apiKey: string;
  /** The model conversations use unless their options name another (AGENT_MODEL, default `gpt-4o-mini`). */
  model: string;
  /** AGENT_MODEL_PROVIDER; when absent each call's model name decides (`modelProviderOf`). */
  provider?: ModelProvider;
  /** AGENT_MODEL_API, or `anthropic` for AGENT_MODEL_PROVIDER=anthropic; Chat Completions when absent. */
  api?: ModelApi;
  /** Anthropic's endpoint, for the `anthropic` API. */
  anthropic?: AnthropicSettings;
}

export const DEFAULT_MODEL = 'gpt-4o-mini';

export const MODEL_SETUP_HELP = `No model is configured. Point durable-agent at any OpenAI-compatible endpoint:
  export OPENAI_API_KEY=sk-...                      # for api.openai.com, or
  export OPENAI_BASE_URL=http://127.0.0.1:11434/v1  # any compatible server (a key is optional)
  export AGENT_MODEL=gpt-4o-mini                    # the model name to request
or Anthropic's own API:
  export AGENT_MODEL_PROVIDER=anthropic ANTHROPIC_API_KEY=sk-ant-... AGENT_MODEL=claude-sonnet-4-6`;

/**
 * The model settings the environment gives: AGENT_MODEL_API (or AGENT_MODEL_PROVIDER=anthropic)
 * picks the API, whose own variables say where it is; AGENT_MODEL names the default model.
 * Undefined when the chosen API's endpoint is not configured; throws on a malformed value.
 */
export function modelSettingsFromEnv(env: NodeJS.ProcessEnv): ModelSettings | undefined {
  const api = modelApiFromEnv(env);
  if (api === 'anthropic') {
    const anthropic = anthropicSettingsFromEnv(env);
    if (!anthropic) return undefined;
    return { apiKey: 'unused', model: env.AGENT_MODEL || DEFAULT_ANTHROPIC_MODEL, api, anthropic };
  }
  const endpoint = openAiEndpointFromEnv(env);
  if (!endpoint) return undefined;
  return { ...endpoint, model: env.AGENT_MODEL || DEFAULT_MODEL, ...(api ? { api } : {}) };
}

/** AGENT_MODEL_API, with AGENT_MODEL_PROVIDER=anthropic meaning Anthropic's own API. */
function modelApiFromEnv(env: NodeJS.ProcessEnv): ModelApi | undefined {
  const named = env.AGENT_MODEL_API?.trim();
  if (named) {
    const api = ModelApiSchema.safeParse(named);
    if (!api.success) {
      throw new Error(
        `AGENT_MODEL_API must be one of ${ModelApiSchema.options.join(', ')}, got ${JSON.stringify(named)}`,
      );
    }
    return api.data;
  }
  return env.AGENT_MODEL_PROVIDER === 'anthropic' ? 'anthropic' : undefined;
}
