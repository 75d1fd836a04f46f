import { z } from 'zod';
import { modelProviderOf } from '../../src/shared/model-provider';
import { builtinTools } from '../../src/tools/builtin/builtin-tools';
import { parametersJsonSchema } from '../../src/tools/json-schema';
import { toolParametersFor } from '../../src/tools/provider-schema';
import { ToolRegistry } from '../../src/tools/registry';

const GEMINI_REJECTS = [
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
];

/** Every keyword used anywhere in a schema, property names excluded. */
function keywordsOf(node: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((item) => keywordsOf(item, out));
  if (typeof node !== 'object' || node === null || Array.isArray(node)) return out;
  for (const [key, value] of Object.entries(node)) {
    out.add(key);
    if (key === 'properties' || key === '$defs' || key === 'definitions') {
      Object.values(value as object).forEach((member) => keywordsOf(member, out));
    } else keywordsOf(value, out);
  }
  return out;
}

describe('the root is always an object with properties', () => {
  test.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    [
      'an object stays as it is',
      { type: 'object', properties: { a: { type: 'string' } } },
      { type: 'object', properties: { a: { type: 'string' } } },
    ],
    ['no properties gets empty ones', { type: 'object' }, { type: 'object', properties: {} }],
    [
      'no type gets one',
      { properties: { a: { type: 'string' } } },
      { type: 'object', properties: { a: { type: 'string' } } },
    ],
    [
      'a union of objects becomes one object, requiring what every variant requires',
      {
        anyOf: [
          {
            type: 'object',
            properties: { mode: { const: 'a' }, x: { type: 'string' } },
            required: ['mode', 'x'],
          },
          { type: 'object', properties: { mode: { const: 'b' }, y: { type: 'number' } }, required: ['mode'] },
        ],
      },
      {
        type: 'object',
        properties: { mode: { const: 'b' }, x: { type: 'string' }, y: { type: 'number' } },
        required: ['mode'],
      },
    ],
  ])('%s', (_name, schema, expected) => {
    expect(toolParametersFor('openai', schema)).toEqual(expected);
    expect(toolParametersFor('mistral', schema)).toEqual(expected);
  });
});

describe('Gemini', () => {
  test('keywords it rejects are stripped everywhere, property names are kept', () => {
    const schema = parametersJsonSchema(
      z.object({
        pattern: z.string().min(1).max(100).regex(/^a/).describe('a property named like a keyword'),
        format: z.string().email().optional(),
        count: z.number().int().min(1).max(10).multipleOf(1),
        tags: z.array(z.string()).min(1).max(5),
        meta: z.record(z.string(), z.string()).optional(),
        nested: z.object({ minimum: z.number().min(0) }).strict(),
      }),
    );
    const cleaned = toolParametersFor('gemini', { ...schema, $schema: 'x', $id: 'y', examples: [{}] });
    const used = keywordsOf(cleaned);
    for (const keyword of GEMINI_REJECTS)
      expect({ keyword, used: used.has(keyword) }).toEqual({ keyword, used: false });
    expect(Object.keys(cleaned.properties as object)).toEqual([
      'pattern',
      'format',
      'count',
      'tags',
      'meta',
      'nested',
    ]);
    expect((cleaned.properties as Record<string, unknown>).pattern).toEqual({
      type: 'string',
      description: 'a property named like a keyword',
    });
    expect((cleaned.properties as Record<string, { properties: unknown }>).nested!.properties).toEqual({
      minimum: { type: 'number' },
    });
  });

  test.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    [
      'a union of literals becomes one enum',
      { anyOf: [{ const: 'markdown' }, { const: 'text' }], description: 'mode' },
      { type: 'string', enum: ['markdown', 'text'], description: 'mode' },
    ],
    ['const becomes a one-value enum', { const: 3 }, { enum: [3] }],
    ['a nullable type loses null', { type: ['string', 'null'] }, { type: 'string' }],
    [
      'a null variant is dropped',
      { anyOf: [{ type: 'integer', minimum: 1 }, { type: 'null' }], description: 'n' },
      { type: 'integer', description: 'n' },
    ],
    [
      'a nullable literal union',
      { anyOf: [{ type: 'string', enum: ['a', 'b'] }, { type: 'null' }] },
      { type: 'string', enum: ['a', 'b'] },
    ],
    [
      'a union of different things stays a union',
      { anyOf: [{ type: 'string' }, { type: 'number' }] },
      { anyOf: [{ type: 'string' }, { type: 'number' }] },
    ],
  ])('%s', (_name, property, expected) => {
    const cleaned = toolParametersFor('gemini', { type: 'object', properties: { p: property } });
    expect((cleaned.properties as Record<string, unknown>).p).toEqual(expected);
  });

  test('$ref is resolved from $defs and definitions; a recursive one becomes an untyped object', () => {
    const cleaned = toolParametersFor('gemini', {
      type: 'object',
      properties: {
        a: { $ref: '#/$defs/Point', description: 'where' },
        b: { $ref: '#/definitions/Name' },
        tree: { $ref: '#/$defs/Tree' },
      },
      $defs: {
        Point: { type: 'object', properties: { x: { type: 'number', minimum: 0 } } },
        Tree: {
          type: 'object',
          properties: { children: { type: 'array', items: { $ref: '#/$defs/Tree' } } },
        },
      },
      definitions: { Name: { type: 'string', minLength: 1 } },
    });
    expect(cleaned).toEqual({
      type: 'object',
      properties: {
        a: { type: 'object', properties: { x: { type: 'number' } }, description: 'where' },
        b: { type: 'string' },
        tree: { type: 'object', properties: { children: { type: 'array', items: { type: 'object' } } } },
      },
    });
  });

  test('other providers get the schema unchanged', () => {
    const schema = parametersJsonSchema(
      z.object({ name: z.string().min(2), n: z.number().max(3).nullable() }),
    );
    expect(toolParametersFor('openai', schema)).toEqual(schema);
    expect(toolParametersFor('mistral', schema)).toEqual(schema);
  });

  test('the registry serves every built-in tool cleaned for Gemini and unchanged for OpenAI', () => {
    const registry = new ToolRegistry(builtinTools());
    const names = builtinTools().map((tool) => tool.name);
    for (const schema of registry.modelSchemas(names, 'gemini')) {
      const used = keywordsOf(schema.function.parameters);
      expect(GEMINI_REJECTS.filter((keyword) => used.has(keyword))).toEqual([]);
      expect(schema.function.parameters.type).toBe('object');
    }
    expect(registry.modelSchemas(['read'], 'openai')[0]!.function.parameters).toEqual(
      registry.parameters('read'),
    );
  });
});

test.each([
  ['gpt-4o-mini', 'openai'],
  ['gemini-2.5-pro', 'gemini'],
  ['google/gemma-3-27b-it', 'gemini'],
  ['mistral-large-latest', 'mistral'],
  ['codestral-2501', 'mistral'],
  ['open-mixtral-8x22b', 'mistral'],
  ['llama3.1', 'openai'],
  ['deepseek-chat', 'deepseek'],
  ['deepseek-reasoner', 'deepseek'],
  ['deepseek-r1:14b', 'openai'],
  ['deepseek-r1-distill-llama-70b', 'openai'],
])('the model %s implies provider %s', (model, provider) => {
  expect(modelProviderOf(model)).toBe(provider);
});
