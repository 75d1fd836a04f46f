import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { anthropicWire } from '../activities/anthropic-wire';
import type { ModelDeps } from '../activities/call-model';
import { type ModelApi, ModelApiSchema } from '../shared/model-api';
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
  /** AGENT_MODEL_API, or `anthropic` for AGENT_MODEL_PROVIDER=anthropic; Chat Completions when absent. */
  api?: ModelApi;
  /** Anthropic's endpoint, for the `anthropic` API: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, AGENT_THINKING_TOKENS. */
  anthropic?: {
    /** ANTHROPIC_API_KEY. */
    apiKey: string;
    /** ANTHROPIC_BASE_URL; Anthropic's own when absent. */
    baseURL?: string;
    /** AGENT_THINKING_TOKENS: the model thinks before answering, up to this many tokens; it does not when absent. */
    thinkingBudgetTokens?: number;
  };
}

export const DEFAULT_MODEL = 'gpt-4o-mini';
/** The model of a worker on Anthropic's API that names none. */
export const DEFAULT_ANTHROPIC_MODEL = 'claude-sonnet-4-6';

export const MODEL_SETUP_HELP = `No model is configured. Point durable-agent at any OpenAI-compatible endpoint:
  export OPENAI_API_KEY=sk-...                      # for api.openai.com, or
  export OPENAI_BASE_URL=http://127.0.0.1:11434/v1  # any compatible server (a key is optional)
  export AGENT_MODEL=gpt-4o-mini                    # the model name to request
or Anthropic's own API:
  export AGENT_MODEL_PROVIDER=anthropic ANTHROPIC_API_KEY=sk-ant-... AGENT_MODEL=claude-sonnet-4-6`;

/**
 * OPENAI_BASE_URL, OPENAI_API_KEY, AGENT_MODEL and AGENT_MODEL_PROVIDER; undefined when neither an
 * endpoint nor a key is set; throws on a malformed URL or an unknown provider.
 */
export function modelSettingsFromEnv(env: NodeJS.ProcessEnv): ModelSettings | undefined {
  const api = modelApiFromEnv(env);
  if (api === 'anthropic') return anthropicSettingsFromEnv(env);
  const baseURL = env.OPENAI_BASE_URL || undefined;
  const apiKey = env.OPENAI_API_KEY || undefined;
  if (!baseURL && !apiKey) return undefined;
  checkedUrl(baseURL, 'OPENAI_BASE_URL', 'http://127.0.0.1:11434/v1');
  const provider = env.AGENT_MODEL_PROVIDER
    ? ModelProviderSchema.safeParse(env.AGENT_MODEL_PROVIDER)
    : undefined;
  if (provider && !provider.success) {
    throw new Error(
      `AGENT_MODEL_PROVIDER must be one of ${[...ModelProviderSchema.options, 'anthropic'].join(', ')}, got ${JSON.stringify(env.AGENT_MODEL_PROVIDER)}`,
    );
  }
  return {
    baseURL,
    apiKey: apiKey ?? 'unused',
    model: env.AGENT_MODEL || DEFAULT_MODEL,
    ...(provider?.data ? { provider: provider.data } : {}),
    ...(api ? { api } : {}),
  };
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

/** Anthropic's Messages API: ANTHROPIC_API_KEY (or a base URL that needs none), AGENT_MODEL, AGENT_THINKING_TOKENS. */
function anthropicSettingsFromEnv(env: NodeJS.ProcessEnv): ModelSettings | undefined {
  const baseURL = env.ANTHROPIC_BASE_URL || undefined;
  const apiKey = env.ANTHROPIC_API_KEY || undefined;
  if (!baseURL && !apiKey) return undefined;
  checkedUrl(baseURL, 'ANTHROPIC_BASE_URL', 'http://127.0.0.1:8080');
  const thinking = env.AGENT_THINKING_TOKENS?.trim();
  if (thinking && (!/^\d+$/.test(thinking) || Number(thinking) < 1024)) {
    throw new Error(
      `AGENT_THINKING_TOKENS must be a whole number of tokens of at least 1024, got ${JSON.stringify(thinking)}`,
    );
  }
  return {
    apiKey: 'unused',
    model: env.AGENT_MODEL || DEFAULT_ANTHROPIC_MODEL,
    api: 'anthropic',
    anthropic: {
      apiKey: apiKey ?? 'unused',
      ...(baseURL ? { baseURL } : {}),
      ...(thinking ? { thinkingBudgetTokens: Number(thinking) } : {}),
    },
  };
}

/** Throws a clear error now, rather than on every model call, for a URL that is not http(s). */
function checkedUrl(url: string | undefined, name: string, example: string): void {
  if (url === undefined) return;
  if (!/^https?:\/\//.test(url)) {
    throw new Error(`${name} must be an http(s) URL such as ${example}, got ${JSON.stringify(url)}`);
  }
  new URL(url);
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

/** The wires beyond Chat Completions the settings ask for: Anthropic's needs its own client. */
export function modelWiresOf(settings: ModelSettings): Pick<ModelDeps, 'api' | 'wires'> {
  if (settings.api !== 'anthropic') return settings.api ? { api: settings.api } : {};
  const { apiKey, baseURL, thinkingBudgetTokens } = settings.anthropic ?? { apiKey: 'unused' };
  const client = new Anthropic({
    apiKey,
    ...(baseURL ? { baseURL } : {}),
    maxRetries: 0,
    timeout: 10 * 60_000,
  });
  return {
    api: 'anthropic',
    wires: { anthropic: anthropicWire(client, thinkingBudgetTokens ? { thinkingBudgetTokens } : {}) },
  };
}
