import { type ModelProvider, ModelProviderSchema } from '../../../shared/model-provider';
import { checkedEndpointUrl } from '../endpoint-url';

/** An OpenAI-compatible endpoint: Chat Completions and the Responses API are called there. */
export interface OpenAiEndpoint {
  /** The endpoint's base URL (OPENAI_BASE_URL); OpenAI's when absent. */
  baseURL?: string;
  /** The endpoint's API key (OPENAI_API_KEY); a placeholder for an endpoint that needs none. */
  apiKey: string;
  /** AGENT_MODEL_PROVIDER; when absent each call's model name decides (`modelProviderOf`). */
  provider?: ModelProvider;
}

/**
 * OPENAI_BASE_URL, OPENAI_API_KEY and AGENT_MODEL_PROVIDER; undefined when neither an endpoint nor
 * a key is set; throws on a malformed URL or an unknown provider.
 */
export function openAiEndpointFromEnv(env: NodeJS.ProcessEnv): OpenAiEndpoint | undefined {
  const baseURL = env.OPENAI_BASE_URL || undefined;
  const apiKey = env.OPENAI_API_KEY || undefined;
  if (!baseURL && !apiKey) return undefined;
  checkedEndpointUrl(baseURL, 'OPENAI_BASE_URL', 'http://127.0.0.1:11434/v1');
  const provider = env.AGENT_MODEL_PROVIDER
    ? ModelProviderSchema.safeParse(env.AGENT_MODEL_PROVIDER)
    : undefined;
  if (provider && !provider.success) {
    throw new Error(
      `AGENT_MODEL_PROVIDER must be one of ${[...ModelProviderSchema.options, 'anthropic'].join(', ')}, got ${JSON.stringify(env.AGENT_MODEL_PROVIDER)}`,
    );
  }
  return { baseURL, apiKey: apiKey ?? 'unused', ...(provider?.data ? { provider: provider.data } : {}) };
}
