import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { assembleResponsesStream } from '../../src/activities/models/openai/responses-stream';
import { costOf, priceOf, pricedUsage } from '../../src/shared/model-prices';
import { modelPricesFromEnv } from '../../src/worker/model-prices-settings';
import { modelSettingsFromEnv } from '../../src/activities/models/model-settings';

const PRICES = {
  'gpt-4.1': { input: 2, cachedInput: 0.5, output: 8 },
  'claude-sonnet-4*': { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 },
  'claude-*': { input: 1, output: 5 },
};

test('a model is priced by its own entry, else the longest matching prefix*; unknown models have no price', () => {
  expect(priceOf(PRICES, 'gpt-4.1')).toBe(PRICES['gpt-4.1']);
  expect(priceOf(PRICES, 'claude-sonnet-4-6')).toBe(PRICES['claude-sonnet-4*']);
  expect(priceOf(PRICES, 'claude-haiku-4-5')).toBe(PRICES['claude-*']);
  expect(priceOf(PRICES, 'gpt-4.1-mini')).toBeUndefined();
});

test('cached input is billed at its own price, cache writes at theirs, the rest of input and output at theirs', () => {
  const usage = {
    inputTokens: 1_000_000,
    cachedInputTokens: 600_000,
    cacheWriteTokens: 100_000,
    outputTokens: 10_000,
  };
  // 300k fresh × 3 + 600k × 0.3 + 100k × 3.75 + 10k × 15, per million.
  expect(costOf(usage, PRICES['claude-sonnet-4*'])).toBeCloseTo(0.9 + 0.18 + 0.375 + 0.15, 10);
  expect(pricedUsage(usage, PRICES, ['unpriced', 'gpt-4.1']).costUsd).toBeCloseTo(0.6 + 0.3 + 0.2 + 0.08, 10);
  expect(pricedUsage(usage, PRICES, ['unpriced'])).toEqual(usage);
  expect(pricedUsage(usage, undefined, ['gpt-4.1'])).toEqual(usage);
});

test('AGENT_MODEL_PRICES: read and checked at the start, with the file and the problem named', () => {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'prices-'));
  const good = path.join(directory, 'good.json');
  writeFileSync(good, JSON.stringify(PRICES));
  expect(modelPricesFromEnv({ AGENT_MODEL_PRICES: good })).toEqual(PRICES);
  expect(modelPricesFromEnv({})).toBeUndefined();
  const bad = path.join(directory, 'bad.json');
  writeFileSync(bad, JSON.stringify({ 'gpt-4.1': { input: 2, ouput: 8 } }));
  expect(() => modelPricesFromEnv({ AGENT_MODEL_PRICES: bad })).toThrow(
    new RegExp(`^AGENT_MODEL_PRICES ${bad} must map model names to`),
  );
  expect(() => modelPricesFromEnv({ AGENT_MODEL_PRICES: path.join(directory, 'absent.json') })).toThrow(
    /^AGENT_MODEL_PRICES: cannot read .*absent\.json: ENOENT/,
  );
});

test('AGENT_MODEL_API and AGENT_MODEL_PROVIDER=anthropic choose the API; bad values name what is allowed', () => {
  expect(modelSettingsFromEnv({ OPENAI_API_KEY: 'k', AGENT_MODEL_API: 'responses' })).toMatchObject({
    api: 'responses',
  });
  expect(
    modelSettingsFromEnv({
      AGENT_MODEL_PROVIDER: 'anthropic',
      ANTHROPIC_API_KEY: 'sk-ant',
      AGENT_THINKING_TOKENS: '4096',
    }),
  ).toMatchObject({
    api: 'anthropic',
    model: 'claude-sonnet-4-6',
    anthropic: { apiKey: 'sk-ant', thinkingBudgetTokens: 4096 },
  });
  // Anthropic's API without its key or URL is no model at all: the CLI then says how to set one up.
  expect(modelSettingsFromEnv({ AGENT_MODEL_PROVIDER: 'anthropic', OPENAI_API_KEY: 'k' })).toBeUndefined();
  expect(() => modelSettingsFromEnv({ OPENAI_API_KEY: 'k', AGENT_MODEL_API: 'completions' })).toThrow(
    'AGENT_MODEL_API must be one of chat, responses, anthropic, got "completions"',
  );
  expect(() =>
    modelSettingsFromEnv({
      AGENT_MODEL_PROVIDER: 'anthropic',
      ANTHROPIC_API_KEY: 'k',
      AGENT_THINKING_TOKENS: '10',
    }),
  ).toThrow('AGENT_THINKING_TOKENS must be a whole number of tokens of at least 1024, got "10"');
});

async function* eventsOf(events: unknown[]) {
  for (const event of events) yield event as never;
}

const response = (extra: Record<string, unknown>) => ({
  id: 'r',
  model: 'gpt-5',
  output: [],
  usage: null,
  ...extra,
});

test('Responses API streams: an incomplete response stopped at its limit, a failed one, and one cut short', async () => {
  const incomplete = await assembleResponsesStream(
    eventsOf([
      { type: 'response.output_text.delta', delta: 'Half an' },
      {
        type: 'response.incomplete',
        response: response({ incomplete_details: { reason: 'max_output_tokens' } }),
      },
    ]),
    () => {},
    () => 1,
  );
  expect(incomplete).toMatchObject({ content: [{ type: 'text', text: 'Half an' }], stopReason: 'length' });
  await expect(
    assembleResponsesStream(
      eventsOf([
        {
          type: 'response.failed',
          response: response({ error: { code: 'server_error', message: 'overloaded' } }),
        },
      ]),
      () => {},
      () => 1,
    ),
  ).rejects.toThrow("the model's response failed: overloaded");
  await expect(
    assembleResponsesStream(
      eventsOf([{ type: 'response.output_text.delta', delta: 'cut' }]),
      () => {},
      () => 1,
    ),
  ).rejects.toThrow('the model endpoint ended the stream before the response completed');
});
