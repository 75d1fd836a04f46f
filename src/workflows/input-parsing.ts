import type { z } from 'zod';

/** Passes of dropping unknown keys at most: each pass finds those one level further down. */
const MAX_PASSES = 8;

/**
 * How a conversation reads what clients send it: options, messages, decisions. Unknown keys are
 * refused, so a misspelled option or limit is never taken for an absent one. Runs recorded before
 * that read their inputs dropping the keys they did not know; they replay that way (`strict`
 * false), and what they hand on to their next run is cut to the keys known.
 */
export class InputParsing {
  constructor(readonly strict: boolean) {}

  safeParse<T>(schema: z.ZodType<T>, value: unknown): z.ZodSafeParseResult<T> {
    const parsed = schema.safeParse(value);
    if (parsed.success || this.strict) return parsed;
    return schema.safeParse(knownKeysOnly(schema, value));
  }
}

/** `value` (JSON data) without the keys `schema` refuses as unknown, wherever they are. */
export function knownKeysOnly<T>(schema: z.ZodType<T>, value: T | unknown): unknown {
  if (value === undefined) return value;
  let cleaned: unknown = JSON.parse(JSON.stringify(value));
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const parsed = schema.safeParse(cleaned);
    if (parsed.success) return cleaned;
    const unknown = parsed.error.issues.filter((issue) => issue.code === 'unrecognized_keys');
    if (unknown.length === 0) return cleaned;
    for (const issue of unknown) {
      const holder = issue.path.reduce<unknown>(
        (at, key) =>
          at !== null && typeof at === 'object' ? (at as Record<PropertyKey, unknown>)[key] : undefined,
        cleaned,
      );
      if (holder === null || typeof holder !== 'object') continue;
      for (const key of issue.keys) delete (holder as Record<string, unknown>)[key];
    }
    cleaned = JSON.parse(JSON.stringify(cleaned));
  }
  return cleaned;
}
