import { z } from 'zod';

const SAFE_INTEGER_BOUNDS = new Set([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]);

/**
 * The JSON schema a model sees for a tool's parameters. zod adds `$schema` and ±2^53 bounds on
 * `.int()`, which only cost tokens and upset some providers, so they are removed.
 */
export function parametersJsonSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  return stripSafeIntegerBounds(json) as Record<string, unknown>;
}

function stripSafeIntegerBounds(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(stripSafeIntegerBounds);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (
      (key === 'minimum' || key === 'maximum') &&
      typeof value === 'number' &&
      SAFE_INTEGER_BOUNDS.has(value)
    )
      continue;
    out[key] = stripSafeIntegerBounds(value);
  }
  return out;
}
