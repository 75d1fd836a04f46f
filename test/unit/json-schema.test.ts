import { z } from 'zod';
import { builtinTools } from '../../src/tools/builtin/builtin-tools';
import { parametersJsonSchema } from '../../src/tools/json-schema';
import { readTool } from '../../src/tools/builtin/read';

const MAX = Number.MAX_SAFE_INTEGER;
const MIN = Number.MIN_SAFE_INTEGER;

type Node = Record<string, unknown>;
const child = (node: Node, ...keys: string[]): Node =>
  keys.reduce<Node>((current, key) => current[key] as Node, node);

/** Every number anywhere in a JSON tree, by the key it sits under. */
function numbersUnder(node: unknown, key: string): number[] {
  if (Array.isArray(node)) return node.flatMap((item) => numbersUnder(item, key));
  if (typeof node !== 'object' || node === null) return [];
  return Object.entries(node).flatMap(([k, v]) =>
    k === key && typeof v === 'number' ? [v] : numbersUnder(v, key),
  );
}

const schema = z.object({
  count: z.number().int().describe('any integer'),
  page: z.number().int().min(1).max(50),
  ratio: z.number().min(-1).max(1),
  name: z.string().min(2),
  flag: z.boolean().default(false),
  maybe: z.string().optional(),
  nested: z.object({ depth: z.number().int() }),
  list: z.array(z.number().int().min(0)),
});

describe('parametersJsonSchema', () => {
  const json = parametersJsonSchema(schema);

  test('has no $schema key', () => {
    expect(json).not.toHaveProperty('$schema');
    expect(JSON.stringify(json)).not.toContain('json-schema.org');
  });

  test('root is an object schema with properties and required', () => {
    expect(json.type).toBe('object');
    expect(Object.keys(child(json, 'properties')).sort()).toEqual(
      ['count', 'flag', 'list', 'maybe', 'name', 'nested', 'page', 'ratio'].sort(),
    );
    // Fields with defaults or marked optional are optional for the model (input side of the schema).
    expect([...(json.required as string[])].sort()).toEqual([
      'count',
      'list',
      'name',
      'nested',
      'page',
      'ratio',
    ]);
  });

  test('removes the ±2^53 bounds of .int() everywhere, nested and in arrays', () => {
    expect(numbersUnder(json, 'minimum')).not.toContain(MIN);
    expect(numbersUnder(json, 'maximum')).not.toContain(MAX);
    expect(JSON.stringify(json)).not.toContain(String(MAX));
    expect(child(json, 'properties', 'count')).toEqual({ type: 'integer', description: 'any integer' });
    expect(child(json, 'properties', 'nested', 'properties', 'depth')).toEqual({ type: 'integer' });
  });

  test('keeps real minimum and maximum', () => {
    expect(child(json, 'properties', 'page')).toEqual({ type: 'integer', minimum: 1, maximum: 50 });
    expect(child(json, 'properties', 'ratio')).toMatchObject({ type: 'number', minimum: -1, maximum: 1 });
    expect(child(json, 'properties', 'list', 'items')).toEqual({ type: 'integer', minimum: 0 });
    expect(child(json, 'properties', 'name')).toMatchObject({ type: 'string', minLength: 2 });
  });

  test('keeps defaults and descriptions', () => {
    expect(child(json, 'properties', 'flag')).toMatchObject({ type: 'boolean', default: false });
  });

  test('the read tool schema is what the model should see', () => {
    expect(parametersJsonSchema(readTool.parameters)).toEqual({
      type: 'object',
      properties: {
        path: { type: 'string', minLength: 1, description: 'File path, relative to the workspace root' },
        offset: { type: 'integer', minimum: 1, description: 'First line to return, 1-based (default 1)' },
        limit: { type: 'integer', minimum: 1, description: 'Number of lines to return (default 2000)' },
      },
      required: ['path'],
    });
  });

  test.each(builtinTools().map((tool) => [tool.name, tool] as const))(
    'builtin tool %s has a clean object schema',
    (_name, tool) => {
      const toolJson = parametersJsonSchema(tool.parameters);
      expect(toolJson.type).toBe('object');
      expect(toolJson).not.toHaveProperty('$schema');
      expect(JSON.stringify(toolJson)).not.toContain(String(MAX));
      expect(typeof toolJson.properties).toBe('object');
    },
  );
});
