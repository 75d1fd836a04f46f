import { z } from 'zod';

/**
 * The family of model behind the OpenAI-compatible endpoint, for what differs between them: Gemini
 * rejects many JSON-schema keywords in tool parameters, Mistral wants tool call ids of exactly nine
 * letters and digits, DeepSeek wants a tool-calling turn's `reasoning_content` back. `openai` is
 * everything else, sent as is.
 */
export const ModelProviderSchema = z.enum(['openai', 'gemini', 'mistral', 'deepseek']);
export type ModelProvider = z.infer<typeof ModelProviderSchema>;

/** The provider a model name implies, for when none is configured: `gemini-2.5-pro`, `mistral-large-latest`, … */
export function modelProviderOf(model: string): ModelProvider {
  const name = model.toLowerCase();
  if (/gemini|gemma/.test(name)) return 'gemini';
  if (/mistral|mixtral|codestral|devstral|magistral|ministral|pixtral/.test(name)) return 'mistral';
  // DeepSeek's own API names only: the same models served elsewhere (`deepseek-r1` on Ollama or
  // Groq) go to servers that may refuse the field DeepSeek wants back; they say so by setting it.
  if (/^deepseek-(chat|reasoner)\b/.test(name)) return 'deepseek';
  return 'openai';
}
