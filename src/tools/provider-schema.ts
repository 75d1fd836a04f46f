import type { ModelProvider } from '../shared/model-provider';

type Schema = Record<string, unknown>;

/** Keywords Gemini's function declarations reject. */
const GEMINI_UNSUPPORTED_KEYWORDS = new Set([
  'patternProperties',
  'additionalProperties',
  '$schema',
  '$id',
  '$ref',
  '$defs',
  'definitions',
  'examples',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'multipleOf',
  'pattern',
  'format',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
]);

/** Keywords whose value is one schema, or a list of schemas; `properties` and `$defs` map names to schemas. */
const SCHEMA_KEYWORDS = new Set(['items', 'additionalProperties', 'not', 'contains']);
const SCHEMA_LIST_KEYWORDS = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems']);
const SCHEMA_MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'definitions']);

/**
 * A tool's parameters as `provider` accepts them. For every provider the root
 * is `type: "object"` with `properties` (a root union of objects becomes one object: the union of
 * their properties, requiring what all of them require). For Gemini, `$ref`s are inlined, unions of
 * literals become one `enum`, null variants go, and the keywords it rejects are stripped.
 */
export function toolParametersFor(provider: ModelProvider, schema: Schema): Schema {
  const cleaned = provider === 'gemini' ? cleanForGemini(schema) : schema;
  return objectRoot(cleaned);
}

function objectRoot(schema: Schema): Schema {
  const variants = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (schema.type === undefined && Array.isArray(variants) && variants.every(isObjectSchema)) {
    const { anyOf: _anyOf, oneOf: _oneOf, ...rest } = schema;
    const properties = Object.assign({}, ...variants.map((variant) => variant.properties ?? {})) as Schema;
    const requiredBy = variants.map((variant) => new Set((variant.required as string[] | undefined) ?? []));
    const required = [...(requiredBy[0] ?? [])].filter((name) => requiredBy.every((set) => set.has(name)));
    return { ...rest, type: 'object', properties, ...(required.length ? { required } : {}) };
  }
  return { ...schema, type: 'object', properties: (schema.properties as Schema | undefined) ?? {} };
}

function isObjectSchema(node: unknown): node is Schema {
  return typeof node === 'object' && node !== null && (node as Schema).type === 'object';
}

function cleanForGemini(root: Schema): Schema {
  const definitions = { ...((root.definitions as Schema) ?? {}), ...((root.$defs as Schema) ?? {}) };
  const clean = (node: unknown, resolving: ReadonlySet<string>): unknown => {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return node;
    const schema = withoutNullVariants(node as Schema);
    if (typeof schema.$ref === 'string') {
      const name = schema.$ref.replace(/^#\/(\$defs|definitions)\//, '');
      const target = definitions[name];
      // A recursive reference cannot be inlined; an untyped object is the honest remainder.
      if (typeof target !== 'object' || target === null || resolving.has(name)) return { type: 'object' };
      const { $ref: _ref, ...siblings } = schema;
      return clean({ ...(target as Schema), ...siblings }, new Set([...resolving, name]));
    }
    const out: Schema = {};
    for (const [key, value] of Object.entries(schema)) {
      if (GEMINI_UNSUPPORTED_KEYWORDS.has(key)) continue;
      if (key === 'const') out.enum = [value];
      else if (SCHEMA_KEYWORDS.has(key)) out[key] = clean(value, resolving);
      else if (SCHEMA_LIST_KEYWORDS.has(key) && Array.isArray(value))
        out[key] = value.map((member) => clean(member, resolving));
      else if (SCHEMA_MAP_KEYWORDS.has(key) && typeof value === 'object' && value !== null)
        out[key] = Object.fromEntries(
          Object.entries(value).map(([name, member]) => [name, clean(member, resolving)]),
        );
      else out[key] = value;
    }
    return flattenLiteralUnion(out);
  };
  return clean(root, new Set()) as Schema;
}

/** `type: ["string", "null"]` becomes `"string"`; `anyOf: [X, {type: "null"}]` becomes X. */
function withoutNullVariants(schema: Schema): Schema {
  let out = schema;
  if (Array.isArray(out.type)) {
    const types = out.type.filter((type) => type !== 'null');
    out = { ...out, type: types.length === 1 ? types[0] : types };
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const variants = out[key];
    if (!Array.isArray(variants)) continue;
    const kept = variants.filter((variant) => !(isSchema(variant) && variant.type === 'null'));
    if (kept.length === variants.length) continue;
    const { [key]: _dropped, ...rest } = out;
    out = kept.length === 1 ? { ...(kept[0] as Schema), ...rest } : { ...rest, [key]: kept };
  }
  return out;
}

/** `anyOf: [{const: "a"}, {const: "b"}]` (after `const` became `enum`) becomes `{type: "string", enum: ["a", "b"]}`. */
function flattenLiteralUnion(schema: Schema): Schema {
  for (const key of ['anyOf', 'oneOf'] as const) {
    const variants = schema[key];
    if (!Array.isArray(variants) || variants.length === 0) continue;
    if (!variants.every((variant) => isSchema(variant) && Array.isArray(variant.enum))) continue;
    const values = variants.flatMap((variant) => (variant as Schema).enum as unknown[]);
    const types = new Set(values.map((value) => typeof value));
    const [type] = types;
    if (types.size !== 1 || (type !== 'string' && type !== 'number' && type !== 'boolean')) continue;
    const { [key]: _union, ...rest } = schema;
    return { type, ...rest, enum: [...new Set(values)] };
  }
  return schema;
}

function isSchema(node: unknown): node is Schema {
  return typeof node === 'object' && node !== null && !Array.isArray(node);
}
