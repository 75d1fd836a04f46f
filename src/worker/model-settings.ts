import OpenAI from 'openai';
import { type ModelProvider, ModelProviderSchema } from '../shared/model-provider';

/** Which OpenAI-compatible endpoint and model the worker calls. */
export interface ModelSettings {
  /** The endpoint's base URL (OPENAI_BASE_URL); OpenAI's when absent. */
  baseURL?: string;
  /** The endpoint's API key (OPENAI_API_KEY); a placeholder for an endpoint that needs none. */
  apiKey: string;
  /** The model conversations use unless their options name another (AGENT_MODEL, default `gpt-4o-mini`). */
  model: string;
  /** AGENT_MODEL_PROVIDER; when absent each call's model name decides (`modelProviderOf`). */
  provider?: ModelProvider;
}

export const DEFAULT_MODEL = 'gpt-4o-mini';

export const MODEL_SETUP_HELP = `No model is configured. Point durable-agent at any OpenAI-compatible endpoint:
  export OPENAI_API_KEY=sk-...                      # for api.openai.com, or
  export OPENAI_BASE_URL=http://127.0.0.1:11434/v1  # any compatible server (a key is optional)
  export AGENT_MODEL=gpt-4o-mini                    # the model name to request`;

/**
 * OPENAI_BASE_URL, OPENAI_API_KEY, AGENT_MODEL and AGENT_MODEL_PROVIDER; undefined when neither an
 * endpoint nor a key is set; throws on a malformed URL or an unknown provider.
 */
export function modelSettingsFromEnv(env: NodeJS.ProcessEnv): ModelSettings | undefined {
  const baseURL = env.OPENAI_BASE_URL || undefined;
  const apiKey = env.OPENAI_API_KEY || undefined;
  if (!baseURL && !apiKey) return undefined;
  if (baseURL && !/^https?:\/\//.test(baseURL)) {
    throw new Error(
      `OPENAI_BASE_URL must be an http(s) URL such as http://127.0.0.1:11434/v1, got ${JSON.stringify(baseURL)}`,
    );
  }
  if (baseURL) new URL(baseURL); // throws a clear "Invalid URL" now rather than on every model call
  const provider = env.AGENT_MODEL_PROVIDER
    ? ModelProviderSchema.safeParse(env.AGENT_MODEL_PROVIDER)
    : undefined;
  if (provider && !provider.success) {
    throw new Error(
      `AGENT_MODEL_PROVIDER must be one of ${ModelProviderSchema.options.join(', ')}, got ${JSON.stringify(env.AGENT_MODEL_PROVIDER)}`,
    );
  }
  return {
    baseURL,
    apiKey: apiKey ?? 'unused',
    model: env.AGENT_MODEL || DEFAULT_MODEL,
    ...(provider?.data ? { provider: provider.data } : {}),
  };
}

/** Temporal's retry policy decides about retries, so the client's own are off. */
export function createOpenAiClient(settings: ModelSettings): OpenAI {
  return new OpenAI({
    baseURL: settings.baseURL,
    apiKey: settings.apiKey,
    maxRetries: 0,
    timeout: 10 * 60_000,
  });
}
