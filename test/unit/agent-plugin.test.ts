import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { DurableAgentPlugin } from '../../src/worker/agent-plugin';
import { AGENT_WORKFLOW_NAMES } from '../../src/worker/combined-workflows';
import { selectTools } from '../../src/worker/tool-selection';
import { builtinTools } from '../../src/tools/builtin/builtin-tools';
import { defineTool, textResult } from '../../src/tools/tool';

const lookup = defineTool({
  name: 'lookup',
  label: 'Lookup',
  description: 'Looks a thing up.',
  parameters: z.object({ key: z.string() }),
  category: 'other',
  idempotent: true,
  risk: 'low',
  execute: async (_id, { key }) => textResult(key),
});
const builtins = builtinTools();
const names = (choices: Parameters<typeof selectTools>[0]) =>
  selectTools(choices, builtins).map((tool) => tool.name);

describe('choosing a worker’s tools', () => {
  test('without a list, every built-in', () => {
    expect(names(undefined)).toEqual(builtins.map((tool) => tool.name));
  });

  test('built-ins by name and group in catalog order, then your own', () => {
    expect(names([lookup, 'group:runtime', 'read'])).toEqual(['read', 'exec', 'process', 'lookup']);
  });

  test('an unknown name or group, or two tools of one name, is refused by name', () => {
    expect(() => names(['reed'])).toThrow(/no built-in tool is named "reed"/);
    expect(() => names(['group:nope'])).toThrow(/unknown tool group "group:nope"/);
    expect(() => names(['read', { ...lookup, name: 'read' }])).toThrow(/two tools are named "read"/);
  });
});

describe('the plugin on a worker of your own', () => {
  const plugin = () => new DurableAgentPlugin({ model: { apiKey: 'k', model: 'm' }, tools: [lookup] });

  test('refuses an activity of yours with one of durable-agent’s names instead of replacing it', async () => {
    await expect(
      plugin().configureWorker({ taskQueue: 'team', activities: { runTool: async () => 'mine' } }),
    ).rejects.toThrow(/this worker's activities runTool have the names of durable-agent's/);
  });

  test('keeps your activities, data converter and workflow path, and adds its own', async () => {
    const fileTriage = async () => 'filed';
    const dataConverter = { payloadCodecs: [] };
    const options = await plugin().configureWorker({
      taskQueue: 'team',
      activities: { fileTriage },
      dataConverter,
      workflowsPath: '/team/workflows.ts',
    });
    expect(options.activities).toMatchObject({ fileTriage, callModel: expect.any(Function) });
    expect(options.dataConverter).toBe(dataConverter);
    expect(options.workflowsPath).toBe('/team/workflows.ts');
    expect(options.sinks).toHaveProperty('cancelRequests');
    expect(options.interceptors?.activity).toHaveLength(1);
  });

  test('without a model it says what to pass', async () => {
    await expect(new DurableAgentPlugin({}).configureWorker({ taskQueue: 'team' })).rejects.toThrow(
      /durable-agent needs a model: pass `model: \{ baseURL, apiKey, model \}`/,
    );
  });

  test("a bundle of your workflows built with the plugin exports yours and durable-agent's", () => {
    const theirs = require.resolve('../support/team/workflows');
    const bundled = plugin().configureBundler({ workflowsPath: theirs, preloadModules: ['mine'] });
    const entry = readFileSync(bundled.workflowsPath, 'utf8');
    expect(entry).toContain(`export * from ${JSON.stringify(theirs)};`);
    expect(entry).toMatch(/export \{ conversation, modelLimiter, agentDailyBudget \} from /);
    expect(bundled.preloadModules?.at(-1)).toBe('mine');
    expect(bundled.preloadModules?.[1]).toMatch(/settle-shared-modules/);
  });

  test("the names the combined module exports are every workflow of durable-agent's", async () => {
    const workflows = await import('../../src/workflows');
    expect([...AGENT_WORKFLOW_NAMES].sort()).toEqual(Object.keys(workflows).sort());
  });
});
