import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { z } from 'zod';
import { createRunTool } from '../../src/activities/run-tool';
import type { ToolOutcome } from '../../src/shared/tool-outcome';
import type { ToolRunInput } from '../../src/shared/tool-run';
import { ToolRegistry } from '../../src/tools/registry';
import { type AgentTool, defineTool, textResult } from '../../src/tools/tool';
import { ToolError } from '../../src/tools/tool-error';
import { makeTempDir, removeDir } from './tool-harness';

/** Returns, or fails with, text full of control characters; says which exec mode its context carried. */
const noisyTool = defineTool({
  name: 'noisy',
  label: 'Noisy',
  description: 'Prints control characters.',
  parameters: z.object({ fail: z.boolean().default(false) }),
  category: 'other',
  idempotent: false,
  risk: 'low',
  async execute(_id, params, _signal, _onUpdate, context) {
    const noise = 'ok\0 \x1b[31mred\x1b[0m\x07\r\n\tend\x7f';
    if (params.fail) throw new ToolError('ExecutionFailed', noise);
    return textResult(`${noise} mode=${context.execSecurity ?? 'none'}`);
  },
});

let workspace: string;
beforeAll(async () => {
  workspace = await makeTempDir();
});
afterAll(() => removeDir(workspace));

function run(input: Partial<ToolRunInput> & { arguments: Record<string, unknown> }): Promise<ToolOutcome> {
  const runTool = createRunTool({
    tools: new ToolRegistry([noisyTool as AgentTool]),
    defaultWorkspace: workspace,
  });
  return new MockActivityEnvironment(
    { heartbeatTimeoutMs: 10_000 },
    { logger: new DefaultLogger('ERROR', () => {}) },
  ).run(runTool, {
    conversationId: 'c1',
    toolCallId: 'call_1',
    toolName: 'noisy',
    workspace,
    ...input,
  }) as Promise<ToolOutcome>;
}

test('tool output enters the transcript without control characters; newline, carriage return and tab kept', async () => {
  const outcome = await run({ arguments: {} });
  expect(outcome.content).toEqual([{ type: 'text', text: 'ok red\r\n\tend mode=none' }]);
});

test('an error message is sanitised too, not merely escaped into the JSON', async () => {
  const outcome = await run({ arguments: { fail: true } });
  expect(outcome.isError).toBe(true);
  expect(JSON.parse((outcome.content[0] as { text: string }).text)).toEqual({
    status: 'error',
    tool: 'noisy',
    error: 'ok red\r\n\tend',
  });
});

test("the conversation's exec security mode reaches the tool", async () => {
  const outcome = await run({ arguments: {}, execSecurity: 'safe-bin' });
  expect((outcome.content[0] as { text: string }).text).toMatch(/mode=safe-bin$/);
});
