/**
 * What models send is not always what a tool declares: `filePath` for `file_path`, Claude Code's `file_path` for `path`, `"20"` for 20, `""` or
 * `null` for "not given". The tool activity normalises a call's top-level arguments against the
 * tool's JSON schema before its zod schema validates them, so tools see their declared names and
 * types. Nested objects are left as they are.
 */

/** Other names for a parameter, in snake_case: Claude Code's tool parameters and common variants. */
const ALIASES: Readonly<Record<string, string>> = {
  file_path: 'path',
  filepath: 'path',
  file: 'path',
  filename: 'path',
  notebook_path: 'path',
  directory: 'path',
  dir: 'path',
  old_text: 'old_string',
  old_str: 'old_string',
  new_text: 'new_string',
  new_str: 'new_string',
  cmd: 'command',
  head_limit: 'max_results',
  '-i': 'ignore_case',
  case_insensitive: 'ignore_case',
  run_in_background: 'background',
};

export type NormalizedArguments =
  { ok: true; params: Record<string, unknown> } | { ok: false; error: string };

interface PropertySchema {
  type?: unknown;
  items?: { type?: unknown };
}

/**
 * @param schema the tool's parameters as JSON schema (an object schema; anything else is passed through)
 * @param verbatim string parameters taken as sent: not trimmed, and `""` is a value
 * @returns the arguments under the tool's own names, or `"<name> required"` for the first
 *   required parameter still missing
 */
export function normalizeToolArguments(
  args: Readonly<Record<string, unknown>>,
  schema: Readonly<Record<string, unknown>>,
  verbatim: ReadonlySet<string> = new Set(),
): NormalizedArguments {
  const properties = (schema.properties ?? {}) as Record<string, PropertySchema>;
  const declared = new Set(Object.keys(properties));
  const renamed = renameToDeclared(args, declared);

  const params: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(renamed)) {
    const property = properties[key];
    const value = property ? coerce(raw, property, verbatim.has(key)) : raw;
    if (value !== undefined) params[key] = value;
  }
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  const missing = required.find((name) => params[name] === undefined);
  return missing === undefined ? { ok: true, params } : { ok: false, error: `${missing} required` };
}

function renameToDeclared(
  args: Readonly<Record<string, unknown>>,
  declared: ReadonlySet<string>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const undeclared: [string, unknown][] = [];
  for (const [key, value] of Object.entries(args)) {
    if (declared.has(key)) out[key] = value;
    else undeclared.push([key, value]);
  }
  for (const [key, value] of undeclared) {
    const target = declaredNameFor(key, declared);
    // The declared name itself wins over any other spelling of it.
    if (target === undefined || target in out) out[key] ??= value;
    else out[target] = value;
  }
  return out;
}

function declaredNameFor(key: string, declared: ReadonlySet<string>): string | undefined {
  const snake = toSnakeCase(key);
  const candidates = [snake, toCamelCase(snake)];
  const alias = ALIASES[snake];
  if (alias) candidates.push(alias, toCamelCase(alias));
  return candidates.find((candidate) => declared.has(candidate));
}

function coerce(value: unknown, property: PropertySchema, verbatim: boolean): unknown {
  if (value === null) return undefined;
  const type = primaryType(property.type);
  if (typeof value === 'string' && !verbatim) {
    const trimmed = value.trim();
    if (trimmed === '') return undefined;
    value = trimmed;
  }
  switch (type) {
    case 'string':
      return typeof value === 'number' || typeof value === 'boolean' ? String(value) : value;
    case 'number':
    case 'integer': {
      const number = typeof value === 'string' && NUMBER.test(value) ? Number(value) : value;
      return type === 'integer' && typeof number === 'number' && Number.isFinite(number)
        ? Math.trunc(number)
        : number;
    }
    case 'boolean':
      if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
      return value;
    case 'array': {
      const list = typeof value === 'string' ? [value] : value;
      if (!Array.isArray(list) || primaryType(property.items?.type) !== 'string' || verbatim) return list;
      const items = list.map((item) => (typeof item === 'string' ? item.trim() : item));
      return items.filter((item) => item !== '');
    }
    default:
      return value;
  }
}

const NUMBER = /^-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/** `"string"`, or the non-null member of `["string", "null"]`; undefined for unions and untyped schemas. */
function primaryType(type: unknown): string | undefined {
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) {
    const concrete = type.filter((member) => member !== 'null');
    return concrete.length === 1 && typeof concrete[0] === 'string' ? concrete[0] : undefined;
  }
  return undefined;
}

function toSnakeCase(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

function toCamelCase(snake: string): string {
  return snake.replace(/_([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
}
