import { z } from 'zod';
import type { Usage } from './messages';

const perMillion = z.number().nonnegative().finite();

/** What a model's tokens cost, in US dollars per million tokens, as its provider lists them. */
export const ModelPriceSchema = z.strictObject({
  /** Input tokens not read from the provider's cache. */
  input: perMillion,
  /** Input tokens read from the provider's cache; `input` when absent. */
  cachedInput: perMillion.optional(),
  /** Input tokens written to the provider's cache (Anthropic); `input` when absent. */
  cacheWrite: perMillion.optional(),
  /** Output tokens, reasoning included. */
  output: perMillion,
});
/**
 * A model's price in US dollars per million tokens: `input`, `cachedInput`, `cacheWrite`, `output`.
 *
 * @useDeclaredType
 */
export type ModelPrice = z.infer<typeof ModelPriceSchema>;

/**
 * The operator's price table (AGENT_MODEL_PRICES): model name -> price. A key ending in `*` prices
 * every model whose name starts with what comes before it (`claude-sonnet-4*`), the longest such
 * key winning; `*` alone prices every model no other key does.
 */
export const ModelPricesSchema = z.record(z.string().min(1), ModelPriceSchema);
/**
 * The price table: model name (or `prefix*`, or `*`) -> its price.
 *
 * @useDeclaredType
 */
export type ModelPrices = z.infer<typeof ModelPricesSchema>;

/** The price of `model`: its own entry, else the longest matching `prefix*` entry; undefined when none. */
export function priceOf(prices: ModelPrices, model: string): ModelPrice | undefined {
  const exact = prices[model];
  if (exact) return exact;
  const prefixes = Object.keys(prices)
    .filter((key) => key.endsWith('*') && model.startsWith(key.slice(0, -1)))
    .sort((a, b) => b.length - a.length);
  return prefixes[0] !== undefined ? prices[prefixes[0]] : undefined;
}

/** What a call's tokens cost in US dollars at `price`. */
export function costOf(usage: Usage, price: ModelPrice): number {
  const cached = usage.cachedInputTokens ?? 0;
  const written = usage.cacheWriteTokens ?? 0;
  const fresh = Math.max(0, usage.inputTokens - cached - written);
  const dollars =
    fresh * price.input +
    cached * (price.cachedInput ?? price.input) +
    written * (price.cacheWrite ?? price.input) +
    usage.outputTokens * price.output;
  return dollars / 1_000_000;
}

/** `usage` with its cost, priced as the first of `models` the table has a price for; as it was when none. */
export function pricedUsage(usage: Usage, prices: ModelPrices | undefined, models: string[]): Usage {
  if (!prices) return usage;
  for (const model of models) {
    const price = priceOf(prices, model);
    if (price) return { ...usage, costUsd: costOf(usage, price) };
  }
  return usage;
}
