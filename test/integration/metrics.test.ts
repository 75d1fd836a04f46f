import { randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { AgentClient } from '../../src/client/agent-client';
import { agentDataConverter } from '../../src/worker/data-converter';
import { freePort } from '../../src/platform/free-port';
import { assertCliBuilt, startCli } from '../support/cli-process';
import { startScriptedModelServer } from '../support/scripted-model-server';
import { waitFor } from '../support/test-worker';
import { waitForEvent } from '../support/wait-for-event';

interface Sample {
  labels: Record<string, string>;
  value: number;
}

/** The samples of one series in Prometheus text format. */
function samples(text: string, name: string): Sample[] {
  const found: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const labels = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((pair) => [pair[1]!, pair[2]!]),
    );
    found.push({ labels, value: Number(match[3]) });
  }
  return found;
}

/** The sum of a series' samples whose labels include `where`. */
function total(text: string, name: string, where: Record<string, string>): number {
  return samples(text, name)
    .filter((sample) => Object.entries(where).every(([key, value]) => sample.labels[key] === value))
    .reduce((sum, sample) => sum + sample.value, 0);
}

beforeAll(assertCliBuilt);

test('a worker started with --metrics-port serves the SDK metrics and tool, model and approval series with the right counts', async () => {
  const model = await startScriptedModelServer([
    {
      toolCalls: [
        { id: 'call_ok', name: 'read', arguments: { path: 'notes.txt' } },
        { id: 'call_missing', name: 'read', arguments: { path: 'missing.txt' } },
        { id: 'call_write', name: 'write', arguments: { path: 'out.txt', content: 'x' } },
      ],
      usage: { prompt: 10, completion: 5, cached: 4, reasoning: 2 },
    },
    { text: 'Read one, wrote one.' },
  ]);
  const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-metrics-'));
  await writeFile(path.join(workspace, 'notes.txt'), 'a note');
  // Dear on purpose, so each call's cost is a whole number of millionths: 2 × (10 × 1000 + 5 × 2000) / 1e6 dollars.
  const prices = path.join(await mkdtemp(path.join(os.tmpdir(), 'durable-agent-prices-')), 'prices.json');
  await writeFile(prices, JSON.stringify({ 'scripted-*': { input: 1000, output: 2000 } }));
  const taskQueue = `metrics-${randomUUID()}`;
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS,
    AGENT_TASK_QUEUE: taskQueue,
    OPENAI_BASE_URL: model.baseUrl,
    AGENT_MODEL: 'scripted-model',
    AGENT_MODEL_PRICES: prices,
  };
  const worker = startCli(['worker', '--workspace', workspace, '--metrics-port', String(port)], env);
  const connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  try {
    await worker.stderrMatching(/worker on task queue/);
    const client = new Client({ connection, dataConverter: agentDataConverter() });
    const agent = new AgentClient(client, taskQueue);
    const id = `conv-${randomUUID()}`;
    await agent.send(id, 'Read and write', {
      options: { approval: { mode: 'auto', tools: { write: 'always' } } },
    });
    const handle = client.workflow.getHandle(id);
    await waitForEvent(handle, 'approval_requested');
    await agent.approve(id, { toolCallId: 'call_write', decision: 'allow_once', by: 'alice' });
    await waitForEvent(handle, 'run_finished');

    const scrape = async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    // The exporter reads the meters periodically: wait until the last call shows.
    const text = await waitFor(async () => {
      const body = await scrape();
      return total(body, 'durable_agent_model_calls_total', { taskQueue }) === 2 &&
        total(body, 'durable_agent_approvals_decided_total', { taskQueue }) === 1
        ? body
        : undefined;
    }, 'the metrics of the run');
    const ours = { taskQueue };

    expect(total(text, 'durable_agent_tool_calls_total', { ...ours, tool: 'read', outcome: 'ok' })).toBe(1);
    expect(total(text, 'durable_agent_tool_calls_total', { ...ours, tool: 'read', outcome: 'error' })).toBe(
      1,
    );
    expect(total(text, 'durable_agent_tool_calls_total', { ...ours, tool: 'write', outcome: 'ok' })).toBe(1);
    expect(total(text, 'durable_agent_tool_duration_count', { ...ours, tool: 'read' })).toBe(2);
    expect(
      total(text, 'durable_agent_model_calls_total', { ...ours, model: 'scripted-model', outcome: 'ok' }),
    ).toBe(2);
    expect(total(text, 'durable_agent_model_latency_count', { ...ours, model: 'scripted-model' })).toBe(2);
    expect(total(text, 'durable_agent_model_time_to_first_token_count', ours)).toBe(2);
    // The scripted endpoint reports 10 tokens in and 5 out for each answer; the first, 4 cached and 2 reasoning.
    expect(total(text, 'durable_agent_model_tokens_total', { ...ours, direction: 'input' })).toBe(20);
    expect(total(text, 'durable_agent_model_tokens_total', { ...ours, direction: 'output' })).toBe(10);
    expect(total(text, 'durable_agent_model_tokens_total', { ...ours, direction: 'cached_input' })).toBe(4);
    expect(total(text, 'durable_agent_model_tokens_total', { ...ours, direction: 'reasoning' })).toBe(2);
    expect(
      total(text, 'durable_agent_model_cost_micro_usd_total', { ...ours, model: 'scripted-model' }),
    ).toBe(40_000);
    expect(total(text, 'durable_agent_approvals_requested_total', { ...ours, tool: 'write' })).toBe(1);
    expect(
      total(text, 'durable_agent_approvals_decided_total', {
        ...ours,
        tool: 'write',
        decision: 'allow_once',
      }),
    ).toBe(1);
    expect(total(text, 'durable_agent_approval_wait_count', { ...ours, tool: 'write' })).toBe(1);
    // The SDK's own series are on the same endpoint.
    // The SDK's own series are on the same endpoint (its labels are snake_case).
    const sdk = { task_queue: taskQueue };
    // The reads are short read-only calls, run as local activities; the write is an activity.
    expect(
      total(text, 'temporal_activity_execution_latency_count', { ...sdk, activity_type: 'runTool' }),
    ).toBe(1);
    expect(
      total(text, 'temporal_local_activity_execution_latency_count', {
        ...sdk,
        activity_type: 'runLocalTool',
      }),
    ).toBe(2);
    expect(
      total(text, 'temporal_activity_execution_latency_count', { ...sdk, activity_type: 'callModel' }),
    ).toBe(2);
  } finally {
    worker.kill('SIGTERM');
    await worker.done;
    await connection.close();
    await model.close();
  }
}, 120_000);

test('tokens per run and runs stopped at their budget are series of the workflow', async () => {
  const model = await startScriptedModelServer([{ text: 'Answered within budget.' }]);
  const taskQueue = `metrics-budget-${randomUUID()}`;
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS,
    AGENT_TASK_QUEUE: taskQueue,
    OPENAI_BASE_URL: model.baseUrl,
    AGENT_MODEL: 'scripted-model',
  };
  const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-metrics-'));
  const worker = startCli(['worker', '--workspace', workspace, '--metrics-port', String(port)], env);
  const connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  try {
    await worker.stderrMatching(/worker on task queue/);
    const client = new Client({ connection, dataConverter: agentDataConverter() });
    const agent = new AgentClient(client, taskQueue);
    const id = `conv-${randomUUID()}`;
    const handle = client.workflow.getHandle(id);
    // The first run spends the whole budget (15 tokens); the second is stopped before its model call.
    await agent.send(id, 'Answer once', { options: { budget: { tokens: 15 } } });
    await waitForEvent(handle, 'run_finished', (event) => event.run === 1);
    await agent.send(id, 'And again');
    await waitForEvent(handle, 'approval_requested', (event) => event.toolCallId === 'budget-1');
    await agent.approve(id, { toolCallId: 'budget-1', decision: 'reject_once', by: 'alice' });
    await waitForEvent(handle, 'run_finished', (event) => event.run === 2);

    const ours = { taskQueue };
    const text = await waitFor(async () => {
      const body = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      return total(body, 'durable_agent_run_tokens_count', ours) === 2 ? body : undefined;
    }, 'the metrics of both runs');
    expect(total(text, 'durable_agent_run_tokens_sum', { ...ours, outcome: 'answered' })).toBe(15);
    expect(total(text, 'durable_agent_run_tokens_count', { ...ours, outcome: 'budget_exhausted' })).toBe(1);
    expect(total(text, 'durable_agent_budget_stops_total', { ...ours, budget: 'tokens' })).toBe(1);
    expect(total(text, 'durable_agent_approvals_requested_total', { ...ours, tool: 'budget' })).toBe(1);
  } finally {
    worker.kill('SIGTERM');
    await worker.done;
    await connection.close();
    await model.close();
  }
}, 120_000);
