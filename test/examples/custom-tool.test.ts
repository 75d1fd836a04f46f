import { randomUUID } from 'node:crypto';
import { runExample } from '../support/run-example';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';

let model: ScriptedModelServer | undefined;
afterEach(async () => model?.close());

test('examples/custom-tool: the model calls the typed tool, gets its result, and answers', async () => {
  model = await startScriptedModelServer([
    { toolCalls: [{ id: 'call_stock', name: 'stock_level', arguments: { sku: 'blue-mug' } }] },
    { text: 'We have 12 blue mugs.' },
  ]);
  const stdout = await runExample('custom-tool', {
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
    OPENAI_BASE_URL: model.baseUrl,
    TASK_QUEUE: `example-custom-tool-${randomUUID()}`,
  });
  expect(stdout.trim().split('\n').pop()).toBe('answered: We have 12 blue mugs.');
  const offered = model.script.requests[0]!.tools?.map((tool) => tool.function.name);
  expect(offered).toEqual(['stock_level']);
  expect(JSON.stringify(model.script.requests[1]!.messages)).toContain('12 of blue-mug in stock');
});
