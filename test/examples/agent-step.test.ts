import { randomUUID } from 'node:crypto';
import { runExample } from '../support/run-example';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';

let model: ScriptedModelServer | undefined;
afterEach(async () => model?.close());

test("examples/agent-step: the team's workflow runs an agent step, then its own activity sends the draft", async () => {
  model = await startScriptedModelServer([{ text: 'Sorry about your mug! A new one is on its way.' }]);
  const stdout = await runExample('agent-step', {
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
    OPENAI_BASE_URL: model.baseUrl,
    TASK_QUEUE: `example-agent-step-${randomUUID()}`,
  });
  expect(stdout.trim().split('\n').pop()).toMatch(
    /^sent to \d+: Sorry about your mug! A new one is on its way\.$/,
  );
  expect(JSON.stringify(model.script.requests[0]!.messages)).toContain('My mug arrived broken.');
});
