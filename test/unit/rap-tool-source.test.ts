import { randomBytes } from 'node:crypto';
import { RapToolSource } from '../../src/rap/rap-tool-source';
import { RapCallbackSchema } from '../../src/rap/rap-toolset';

const endpoint = (base: string) => `${base}/invoke`;
const tool = (name: string, inputSchema: Record<string, unknown> = { type: 'object' }) => ({
  name,
  description: `${name} (test)`,
  inputSchema,
});

/** A fetch that serves each base URL's toolset document (or a status when it is a number). */
function servingToolsets(toolsets: Record<string, unknown>): typeof fetch {
  return (async (input: string | URL | Request) => {
    const url = String(input);
    const base = Object.keys(toolsets).find((candidate) => url === `${candidate}/.well-known/rap-toolset`);
    const served = base === undefined ? 404 : toolsets[base];
    if (typeof served === 'number') return new Response('no', { status: served });
    return Response.json(served);
  }) as typeof fetch;
}

function sourceOf(toolsets: Record<string, unknown>): RapToolSource {
  return new RapToolSource(
    {
      toolsets: Object.keys(toolsets),
      host: '127.0.0.1',
      port: 1,
      secret: randomBytes(32),
      timeoutMs: 1_000,
    },
    servingToolsets(toolsets),
  );
}

describe('RAP toolset discovery', () => {
  const a = 'http://127.0.0.1:9001';
  const b = 'http://127.0.0.1:9002';
  const broken = 'http://127.0.0.1:9003';
  const down = 'http://127.0.0.1:9004';

  test('an invalid toolset exposes none of its tools and a name two toolsets define is exposed by neither', async () => {
    const discovery = await sourceOf({
      [a]: { name: 'a', endpoint: endpoint(a), tools: [tool('lookup'), tool('shared')] },
      [b]: { name: 'b', endpoint: endpoint(b), tools: [tool('shared'), tool('deploy')] },
      [broken]: { name: 'broken', endpoint: endpoint(broken), tools: [tool('fine'), tool('not fine')] },
      [down]: 503,
    }).discover();

    expect(discovery.tools.map((found) => found.name).sort()).toEqual([
      'cancel_subscription',
      'deploy',
      'lookup',
    ]);
    expect(discovery.warnings).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/RAP toolset at http:\/\/127\.0\.0\.1:9003 offers no tools: invalid toolset/),
        expect.stringMatching(/RAP toolset at http:\/\/127\.0\.0\.1:9004 offers no tools: .*answered 503/),
        'RAP tool shared is defined by a and b, so by neither',
      ]),
    );
  });

  test('tools answer by callback and take their risk from the annotations', async () => {
    const { tools } = await sourceOf({
      [a]: {
        name: 'a',
        endpoint: endpoint(a),
        tools: [
          { ...tool('read_it'), annotations: { readOnly: true } },
          { ...tool('drop_it'), annotations: { destructive: true } },
          tool('do_it'),
        ],
      },
    }).discover();
    const byName = new Map(tools.map((found) => [found.name, found]));
    expect(byName.get('read_it')).toMatchObject({ risk: 'low', asyncCompletion: true, idempotent: false });
    expect(byName.get('drop_it')?.risk).toBe('high');
    expect(byName.get('do_it')).toMatchObject({ risk: 'medium', startToCloseTimeoutMs: 1_000 });
  });

  test('arguments are checked against the inputSchema and passed on as sent', async () => {
    const inputSchema = {
      type: 'object',
      properties: {
        build: { type: 'integer' },
        branch: { type: 'string', default: 'main' },
      },
      required: ['build'],
    };
    const { tools } = await sourceOf({
      [a]: { name: 'a', endpoint: endpoint(a), tools: [tool('status', inputSchema)] },
    }).discover();
    const status = tools.find((found) => found.name === 'status')!;

    expect(status.inputJsonSchema).toEqual(inputSchema);
    expect(status.parameters.safeParse({ build: 7, note: 'kept' })).toEqual({
      success: true,
      data: { build: 7, note: 'kept' },
    });
    expect(status.parameters.safeParse({ build: 'seven' }).success).toBe(false);
    expect(status.parameters.safeParse({}).success).toBe(false);
  });

  test('a schema zod cannot read is left to the tool to check', async () => {
    const { tools } = await sourceOf({
      [a]: {
        name: 'a',
        endpoint: endpoint(a),
        tools: [tool('remote', { type: 'object', properties: { x: { $ref: 'https://schemas.example/x' } } })],
      },
    }).discover();
    expect(tools.find((found) => found.name === 'remote')!.parameters.safeParse({ x: 1 }).success).toBe(true);
  });
});

describe('RAP callback messages', () => {
  const ids = { group_id: 'conv-1', id: 'call_1' };

  test('an image item of a result is taken by the spec’s mediaType (or mimeType)', () => {
    for (const type of ['mediaType', 'mimeType']) {
      const parsed = RapCallbackSchema.parse({
        type: 'tool_result',
        ...ids,
        content: [{ type: 'image', data: 'AAAA', [type]: 'image/png' }],
      });
      expect(parsed).toMatchObject({ content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }] });
    }
    expect(
      RapCallbackSchema.safeParse({ type: 'tool_result', ...ids, content: [{ type: 'image', data: 'AAAA' }] })
        .success,
    ).toBe(false);
  });

  test('a result needs text or content; a choice’s default must be one of its choices', () => {
    expect(RapCallbackSchema.safeParse({ type: 'tool_result', ...ids }).success).toBe(false);
    const choice = {
      type: 'user_choice',
      ...ids,
      prompt: 'Deploy?',
      choices: ['Yes', 'No'],
      response_url: 'http://127.0.0.1:9001/choice',
    };
    expect(RapCallbackSchema.safeParse({ ...choice, default: 1 }).success).toBe(true);
    expect(RapCallbackSchema.safeParse({ ...choice, default: 2 }).success).toBe(false);
  });
});
