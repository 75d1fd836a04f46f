import { z } from 'zod';

/**
 * Which API the model is called through: `chat` (Chat Completions, which every OpenAI-compatible
 * endpoint serves), `responses` (OpenAI's Responses API, which carries a reasoning model's
 * reasoning from one call of a tool loop to the next) or `anthropic` (Anthropic's Messages API,
 * with thinking kept across tool calls and prompt caching marked).
 */
export const ModelApiSchema = z.enum(['chat', 'responses', 'anthropic']);
/**
 * The API a model is called through: `chat` (Chat Completions), `responses` (OpenAI's Responses
 * API) or `anthropic` (Anthropic's Messages API).
 *
 * @useDeclaredType
 */
export type ModelApi = z.infer<typeof ModelApiSchema>;
