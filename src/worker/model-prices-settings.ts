import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { type ModelPrices, ModelPricesSchema } from '../shared/model-prices';

/**
 * AGENT_MODEL_PRICES: a JSON file of US dollars per million tokens by model name,
 * `{ "gpt-4.1": { "input": 2, "cachedInput": 0.5, "output": 8 }, "claude-sonnet-4*": { … } }`.
 * Undefined when unset. Throws on a file that cannot be read or does not fit, so the worker does not start.
 */
export function modelPricesFromEnv(env: NodeJS.ProcessEnv): ModelPrices | undefined {
  const file = env.AGENT_MODEL_PRICES?.trim();
  if (!file) return undefined;
  let entries: unknown;
  try {
    entries = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`AGENT_MODEL_PRICES: cannot read ${file}: ${(error as Error).message}`);
  }
  const parsed = ModelPricesSchema.safeParse(entries);
  if (!parsed.success) {
    throw new Error(
      `AGENT_MODEL_PRICES ${file} must map model names to { input, cachedInput?, cacheWrite?, output } in US dollars per million tokens: ${z.prettifyError(parsed.error)}`,
    );
  }
  return parsed.data;
}
