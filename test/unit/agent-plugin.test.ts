import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { Worker } from '@temporalio/worker';
import type { AgentActivities } from '../../src/activities/create-activities';
import { DurableAgentPlugin, STICKY_QUEUE_TIMEOUT_MS } from '../../src/worker/agent-plugin';
import type { AgentPluginOptions } from '../../src/worker/agent-plugin-options';
import {
  AGENT_WORKFLOW_NAMES,
  agentPreloadModules,
  agentWorkflowsModule,
} from '../../src/worker/combined-workflows';
import { freePort } from '../../src/platform/free-port';
import { selectTools } from '../../src/worker/tool-selection';
import { builtinTools } from '../../src/tools/builtin/builtin-tools';
import { ToolRegistry } from '../../src/tools/registry';
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

/** A tool source that counts how often it is closed. */
function closableSource() {
  const source = {
    name: 'probe',
    closed: 0,
    discover: async () => ({ tools: [], warnings: [] }),
    close: async () => {
      source.closed++;
    },
  };
  return source;
}

/** Whether something still listens at `url`. */
async function listening(url: string): Promise<boolean> {
  return fetch(`${url}/nothing-here`).then(
    () => true,
    () => false,
  );
}

/** A worker as `runWorker` sees it, already stopped: it runs no companions. */
function stoppedWorker(taskQueue: string) {
  return {
    options: { taskQueue },
    getState: () => 'STOPPED',
    shutdown: () => undefined,
  } as unknown as Worker;
}

describe('what the plugin keeps of a worker’s own options, and what it refuses', () => {
  const model = { apiKey: 'k', model: 'm' };
  const plugin = (options: AgentPluginOptions = {}) =>
    new DurableAgentPlugin({ model, tools: [lookup], ...options });

  test('a task queue it already serves is refused; another is served', async () => {
    const shared = plugin();
    await shared.configureWorker({ taskQueue: 'team' });
    await expect(shared.configureWorker({ taskQueue: 'team' })).rejects.toThrow(
      'durable-agent already serves task queue team with this plugin',
    );
    await expect(shared.configureWorker({ taskQueue: 'other' })).resolves.toMatchObject({
      taskQueue: 'other',
    });
  });

  test('your interceptors are kept, yours first, and its own added', async () => {
    const mine = () => ({});
    const options = await plugin().configureWorker({
      taskQueue: 'team',
      interceptors: { activity: [mine], workflowModules: ['/team/interceptors.ts'] },
    });
    expect(options.interceptors?.activity).toHaveLength(2);
    expect(options.interceptors?.activity?.[0]).toBe(mine);
    expect(options.interceptors?.workflowModules).toEqual(['/team/interceptors.ts']);
  });

  test('your sinks are kept beside its own', async () => {
    const audit = { record: { fn: () => undefined } };
    const options = await plugin().configureWorker({ taskQueue: 'team', sinks: { audit } });
    expect(options.sinks).toMatchObject({ audit, cancelRequests: expect.any(Object) });
  });

  test('your concurrency and timing are kept; where you set none, the plugin’s options, else its defaults', async () => {
    const yours = await plugin({ maxConcurrentActivities: 9, heartbeatThrottleMs: 3_000 }).configureWorker({
      taskQueue: 'team',
      maxConcurrentActivityTaskExecutions: 7,
      maxHeartbeatThrottleInterval: 111,
      defaultHeartbeatThrottleInterval: 222,
      shutdownGraceTime: 333,
      stickyQueueScheduleToStartTimeout: 444,
    });
    expect(yours).toMatchObject({
      maxConcurrentActivityTaskExecutions: 7,
      maxHeartbeatThrottleInterval: 111,
      defaultHeartbeatThrottleInterval: 222,
      shutdownGraceTime: 333,
      stickyQueueScheduleToStartTimeout: 444,
    });
    const plugins = await plugin({
      maxConcurrentActivities: 9,
      heartbeatThrottleMs: 3_000,
      shutdownGraceTimeMs: 4_000,
      stickyQueueTimeoutMs: 5_000,
    }).configureWorker({ taskQueue: 'team' });
    expect(plugins).toMatchObject({
      maxConcurrentActivityTaskExecutions: 9,
      maxHeartbeatThrottleInterval: 3_000,
      defaultHeartbeatThrottleInterval: 3_000,
      shutdownGraceTime: 4_000,
      stickyQueueScheduleToStartTimeout: 5_000,
    });
    const defaults = await plugin().configureWorker({ taskQueue: 'team' });
    expect(defaults).toMatchObject({
      maxConcurrentActivityTaskExecutions: 200,
      maxHeartbeatThrottleInterval: 1_000,
      defaultHeartbeatThrottleInterval: 1_000,
      shutdownGraceTime: 300_000,
      stickyQueueScheduleToStartTimeout: STICKY_QUEUE_TIMEOUT_MS,
    });
  });

  test('workflow code: yours is kept; with none, the bundle it is told of, or its sources bundled at start', async () => {
    const bundle = { codePath: '/team/bundle.js' };
    const yours = await plugin({ workflowBundlePath: '/prebuilt.js' }).configureWorker({
      taskQueue: 'team',
      workflowBundle: bundle,
    });
    expect(yours.workflowBundle).toBe(bundle);
    expect(yours.workflowsPath).toBeUndefined();

    const prebuilt = await plugin({ workflowBundlePath: '/prebuilt.js' }).configureWorker({
      taskQueue: 'team',
    });
    expect(prebuilt.workflowBundle).toEqual({ codePath: '/prebuilt.js' });

    const atStart = await plugin({
      workflowBundlePath: '/prebuilt.js',
      bundleWorkflowsAtStart: true,
    }).configureWorker({ taskQueue: 'team' });
    expect(atStart.workflowBundle).toBeUndefined();
    expect(atStart.workflowsPath).toBe(agentWorkflowsModule());
    expect(atStart.bundlerOptions?.preloadModules).toEqual(agentPreloadModules());
  });

  test('a replay worker keeps its data converter and workflow code, and gets the plugin’s where it has none', () => {
    const dataConverter = { payloadCodecs: [] };
    const ours = { payloadCodecs: [] };
    const shared = plugin({ dataConverter: ours, workflowBundlePath: '/prebuilt.js' });
    const yours = shared.configureReplayWorker({ dataConverter, workflowsPath: '/team/workflows.ts' });
    expect(yours.dataConverter).toBe(dataConverter);
    expect(yours).toEqual({ dataConverter, workflowsPath: '/team/workflows.ts' });
    const theirs = shared.configureReplayWorker({});
    expect(theirs.dataConverter).toBe(ours);
    expect(theirs).toEqual({ dataConverter: ours, workflowBundle: { codePath: '/prebuilt.js' } });
  });

  test('the data converter: yours on a worker or client, else the one the plugin is given', async () => {
    const yours = { payloadCodecs: [] };
    const ours = { payloadCodecs: [] };
    const shared = plugin({ dataConverter: ours });
    expect((await shared.configureWorker({ taskQueue: 'a', dataConverter: yours })).dataConverter).toBe(
      yours,
    );
    expect((await shared.configureWorker({ taskQueue: 'b' })).dataConverter).toBe(ours);
    expect(shared.configureClient({ dataConverter: yours }).dataConverter).toBe(yours);
    expect(shared.configureClient({}).dataConverter).toBe(ours);
  });

  test('a bundle keeps your preload modules once each, after its own', () => {
    const [workflows, settle] = agentPreloadModules();
    const bundled = plugin().configureBundler({
      workflowsPath: require.resolve('../support/team/workflows'),
      preloadModules: [settle!, 'mine'],
    });
    expect(bundled.preloadModules).toEqual([workflows, settle, 'mine']);
  });

  test('serves: activities only gets no workflow code, no sinks and no local tools; workflows only runs no activity tasks', async () => {
    const activitiesOnly = await plugin({ serves: 'activities', tools: ['read'] }).configureWorker({
      taskQueue: 'a',
    });
    expect(activitiesOnly.workflowBundle).toBeUndefined();
    expect(activitiesOnly.workflowsPath).toBeUndefined();
    expect(activitiesOnly.sinks).toBeUndefined();
    expect(activitiesOnly.enableNonLocalActivities).toBeUndefined();
    const listed = await (activitiesOnly.activities as AgentActivities).listTools();
    expect(listed.tools.map((tool) => [tool.name, tool.local])).toEqual([['read', undefined]]);

    const all = await plugin({ tools: ['read'] }).configureWorker({ taskQueue: 'b' });
    expect((await (all.activities as AgentActivities).listTools()).tools[0]?.local).toBe(true);
    expect(all.enableNonLocalActivities).toBeUndefined();

    const workflowsOnly = await plugin({ serves: 'workflows' }).configureWorker({ taskQueue: 'c' });
    expect(workflowsOnly.enableNonLocalActivities).toBe(false);
    expect(workflowsOnly.sinks).toHaveProperty('cancelRequests');
  });

  test('its push endpoint is named in the worker’s identity', async () => {
    const shared = plugin({
      liveEndpoint: { host: '127.0.0.1', port: 0, advertisedUrl: 'http://agent.test:1' },
    });
    const options = await shared.configureWorker({ taskQueue: 'team', identity: 'me' });
    expect(options.identity).toContain('me');
    expect(options.identity).toContain('http://agent.test:1');
    await shared.abandon('team');
  });

  test('abandoned, a worker’s endpoint and tool sources are let go of and its task queue may be configured again', async () => {
    const source = closableSource();
    const shared = plugin({ toolSources: [source], liveEndpoint: { host: '127.0.0.1', port: 0 } });
    const options = await shared.configureWorker({ taskQueue: 'team' });
    const url = liveUrl(options.identity);
    expect(await listening(url)).toBe(true);
    await shared.abandon('team');
    expect(source.closed).toBe(1);
    expect(await listening(url)).toBe(false);
    await expect(shared.configureWorker({ taskQueue: 'team' })).resolves.toMatchObject({ taskQueue: 'team' });
    await shared.abandon('team');
  });

  test('a tool registry it was handed is not closed: its owner closes it', async () => {
    const source = closableSource();
    const tools = new ToolRegistry([lookup], [source]);
    const shared = new DurableAgentPlugin({ model, activities: { tools } });
    await shared.configureWorker({ taskQueue: 'team' });
    await shared.abandon('team');
    expect(source.closed).toBe(0);
  });

  test('a configure that fails lets go of the endpoint and tool sources it started', async () => {
    const source = closableSource();
    const port = await freePort();
    const failing = plugin({ toolSources: [source], liveEndpoint: { host: '127.0.0.1', port } });
    await expect(
      failing.configureWorker({ taskQueue: 'team', activities: { runTool: async () => 'mine' } }),
    ).rejects.toThrow(/have the names of durable-agent's/);
    expect(source.closed).toBe(1);
    expect(await listening(`http://127.0.0.1:${port}`)).toBe(false);
  });

  test('a worker that stopped lets go of what the plugin started for it, and its task queue may be configured again', async () => {
    const source = closableSource();
    const shared = plugin({ toolSources: [source], liveEndpoint: { host: '127.0.0.1', port: 0 } });
    const url = liveUrl((await shared.configureWorker({ taskQueue: 'team' })).identity);
    await shared.runWorker(stoppedWorker('team'), async () => undefined);
    expect(source.closed).toBe(1);
    expect(await listening(url)).toBe(false);
    await expect(shared.configureWorker({ taskQueue: 'team' })).resolves.toMatchObject({ taskQueue: 'team' });
    await shared.abandon('team');
  });

  test('a worker it did not configure is run as it is', async () => {
    let ran = false;
    await plugin().runWorker(stoppedWorker('elsewhere'), async () => {
      ran = true;
    });
    expect(ran).toBe(true);
  });
});

/** The push endpoint's URL the worker's identity names. */
function liveUrl(identity: string | undefined): string {
  const url = /https?:\/\/[^\s|,;]+/.exec(identity ?? '')?.[0];
  if (!url) throw new Error(`no URL in the worker identity ${identity}`);
  return url;
}
