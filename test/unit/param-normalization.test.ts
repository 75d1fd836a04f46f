import { z } from 'zod';
import { parametersJsonSchema } from '../../src/tools/json-schema';
import { normalizeToolArguments } from '../../src/tools/param-normalization';

/** A tool declaring the names of this project's tools: snake_case, one camelCase, every JSON type. */
const schema = parametersJsonSchema(
  z.object({
    path: z.string().min(1),
    old_string: z.string().optional(),
    new_string: z.string().optional(),
    command: z.string().optional(),
    max_results: z.number().int().optional(),
    delayMs: z.number().optional(),
    ignore_case: z.boolean().default(false),
    background: z.boolean().optional(),
    urls: z.array(z.string()).optional(),
    label: z.string().optional(),
    options: z.object({ depth: z.number() }).optional(),
  }),
);
const verbatim = new Set(['old_string', 'new_string']);
const normalize = (args: Record<string, unknown>) => normalizeToolArguments(args, schema, verbatim);

describe('names', () => {
  test.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['declared names pass', { path: 'a', max_results: 3 }, { path: 'a', max_results: 3 }],
    [
      'camelCase for a snake_case parameter',
      { path: 'a', maxResults: 3, ignoreCase: true },
      { path: 'a', max_results: 3, ignore_case: true },
    ],
    ['snake_case for a camelCase parameter', { path: 'a', delay_ms: 5 }, { path: 'a', delayMs: 5 }],
    ['Claude Code file_path for path', { file_path: 'a.txt' }, { path: 'a.txt' }],
    ['camelCase filePath for path', { filePath: 'a.txt' }, { path: 'a.txt' }],
    [
      "pi's oldText/newText",
      { path: 'a', oldText: 'x', newText: 'y' },
      { path: 'a', old_string: 'x', new_string: 'y' },
    ],
    [
      'Claude Code Edit names',
      { file_path: 'a', old_string: 'x', new_string: 'y' },
      { path: 'a', old_string: 'x', new_string: 'y' },
    ],
    ['cmd for command', { path: 'a', cmd: 'ls' }, { path: 'a', command: 'ls' }],
    [
      "Claude Code Grep's head_limit and -i",
      { path: 'a', head_limit: 5, '-i': true },
      { path: 'a', max_results: 5, ignore_case: true },
    ],
    [
      "Claude Code Bash's run_in_background",
      { path: 'a', run_in_background: true },
      { path: 'a', background: true },
    ],
    [
      'the declared name wins over an alias',
      { path: 'kept', file_path: 'other' },
      { path: 'kept', file_path: 'other' },
    ],
    [
      'unknown names are left for the schema to drop',
      { path: 'a', colour: 'red' },
      { path: 'a', colour: 'red' },
    ],
  ])('%s', (_name, args, expected) => {
    expect(normalize(args)).toEqual({ ok: true, params: expected });
  });

  test('an alias only applies when the tool has the target and not the alias', () => {
    const own = parametersJsonSchema(z.object({ file_path: z.string(), path: z.string().optional() }));
    expect(normalizeToolArguments({ file_path: 'a' }, own)).toEqual({ ok: true, params: { file_path: 'a' } });
  });
});

describe('values', () => {
  test.each<[string, Record<string, unknown>, Record<string, unknown>]>([
    ['strings are trimmed', { path: '  a.txt \n', label: ' x ' }, { path: 'a.txt', label: 'x' }],
    ['empty strings are missing', { path: 'a', label: '   ', command: '' }, { path: 'a' }],
    ['null is missing', { path: 'a', label: null, max_results: null }, { path: 'a' }],
    [
      'verbatim strings are kept as sent',
      { path: 'a', old_string: '  x\n', new_string: '' },
      { path: 'a', old_string: '  x\n', new_string: '' },
    ],
    [
      'numbers in strings become numbers',
      { path: 'a', max_results: ' 20 ', delayMs: '1.5' },
      { path: 'a', max_results: 20, delayMs: 1.5 },
    ],
    ['integers are truncated', { path: 'a', max_results: 7.9 }, { path: 'a', max_results: 7 }],
    ['exponents and negatives', { path: 'a', delayMs: '-2e3' }, { path: 'a', delayMs: -2000 }],
    [
      'not-a-number strings are left for the schema to refuse',
      { path: 'a', max_results: 'ten' },
      { path: 'a', max_results: 'ten' },
    ],
    [
      'numbers and booleans for strings become strings',
      { path: 42, label: true },
      { path: '42', label: 'true' },
    ],
    [
      '"true"/"false" for booleans',
      { path: 'a', background: 'TRUE', ignore_case: 'false' },
      { path: 'a', background: true, ignore_case: false },
    ],
    [
      'a single string for a list is wrapped',
      { path: 'a', urls: ' https://x ' },
      { path: 'a', urls: ['https://x'] },
    ],
    [
      'list items are trimmed, empty ones dropped',
      { path: 'a', urls: [' a ', '', 'b'] },
      { path: 'a', urls: ['a', 'b'] },
    ],
    [
      'nested objects are left alone',
      { path: 'a', options: { depth: '2' } },
      { path: 'a', options: { depth: '2' } },
    ],
  ])('%s', (_name, args, expected) => {
    expect(normalize(args)).toEqual({ ok: true, params: expected });
  });
});

describe('required parameters', () => {
  test.each<[string, Record<string, unknown>, string]>([
    ['absent', {}, 'path required'],
    ['empty', { path: '' }, 'path required'],
    ['blank', { path: ' \t ' }, 'path required'],
    ['null', { path: null }, 'path required'],
  ])('%s: "<name> required"', (_name, args, error) => {
    expect(normalize(args)).toEqual({ ok: false, error });
  });

  test('the first missing one is named, in declaration order', () => {
    const two = parametersJsonSchema(
      z.object({ command: z.string(), cwd: z.string(), note: z.string().optional() }),
    );
    expect(normalizeToolArguments({ note: 'x' }, two)).toEqual({ ok: false, error: 'command required' });
    expect(normalizeToolArguments({ command: 'ls' }, two)).toEqual({ ok: false, error: 'cwd required' });
  });

  test('an alias satisfies a required parameter; a verbatim empty string is a value', () => {
    const edit = parametersJsonSchema(z.object({ path: z.string(), new_string: z.string() }));
    expect(normalizeToolArguments({ file_path: 'a', newText: '' }, edit, new Set(['new_string']))).toEqual({
      ok: true,
      params: { path: 'a', new_string: '' },
    });
  });

  test('parameters with defaults are not required', () => {
    expect(normalize({ path: 'a' })).toEqual({ ok: true, params: { path: 'a' } });
  });
});
