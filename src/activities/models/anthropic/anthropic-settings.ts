import { checkedEndpointUrl } from '../endpoint-url';

/** Anthropic's endpoint, for the `anthropic` API: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, AGENT_THINKING_TOKENS. */
export interface AnthropicSettings {
  /** ANTHROPIC_API_KEY. */
  apiKey: string;
  /** ANTHROPIC_BASE_URL; Anthropic's own when absent. */
  baseURL?: string;
  /** AGENT_THINKING_TOKENS: the model thinks before answering, up to this many tokens; it does not when absent. */
  thinkingBudgetTokens?: number;
}

/** The model of a worker on Anthropic's API that names none. */
export const DEFAULT_ANTHROPIC_MODEL = 'claude-sonnet-4-6';

/** ANTHROPIC_API_KEY (or a base URL that needs none) and AGENT_THINKING_TOKENS; undefined when neither key nor URL is set. */
export function anthropicSettingsFromEnv(env: NodeJS.ProcessEnv): AnthropicSettings | undefined {
  const baseURL = env.ANTHROPIC_BASE_URL || undefined;
  const apiKey = env.ANTHROPIC_API_KEY || undefined;
  if (!baseURL && !apiKey) return undefined;
  checkedEndpointUrl(baseURL, 'ANTHROPIC_BASE_URL', 'http://127.0.0.1:8080');
  const thinking = env.AGENT_THINKING_TOKENS?.trim();
  if (thinking && (!/^\d+$/.test(thinking) || Number(thinking) < 1024)) {
    throw new Error(
      `AGENT_THINKING_TOKENS must be a whole number of tokens of at least 1024, got ${JSON.stringify(thinking)}`,
    );
  }
  return {
    apiKey: apiKey ?? 'unused',
    ...(baseURL ? { baseURL } : {}),
    ...(thinking ? { thinkingBudgetTokens: Number(thinking) } : {}),
  };
}
