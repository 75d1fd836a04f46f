import type { ModelWire } from '../../src/activities/models/model-wire';
import type { ModelApi } from '../../src/shared/model-api';
import type { ModelPrices } from '../../src/shared/model-prices';
import type { ApprovalPolicy } from '../../src/shared/approval-policy';
import { type Tracing, tracingClientInterceptors } from '../../src/worker/tracing';
import type { ToolCircuitBreakers } from '../../src/tools/circuit-breaker';
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import type { AgentWorker } from '../../src/worker/agent-worker';
import OpenAI from 'openai';
import type { ToolHooks } from '../../src/tools/tool-hooks';
import { AgentClient } from '../../src/client/agent-client';
import type { ToolPolicy } from '../../src/shared/tool-policy';
import { builtinTools } from '../../src/tools/builtin/builtin-tools';
import { MemoryStore } from '../../src/tools/builtin/memory-store';
import { ToolRegistry } from '../../src/tools/registry';
import type { AgentTool } from '../../src/tools/tool';
import { createAgentWorker } from '../../src/worker/create-worker';
import type { LocalCancelRequests } from '../../src/activities/local-cancel-requests';
import { type ModelLimiterSettings, fleetModelLimiter } from '../../src/activities/model-lease';
import type { DataConverter } from '@temporalio/common';
import { agentDataConverter } from '../../src/worker/data-converter';
import type { LiveModelText } from '../../src/client/live-model-text';
import type { ApproverKeys } from '../../src/shared/signed-decisions';
import type { DailyTokenBudgets } from '../../src/shared/daily-budget';
import type { WorkerFloors } from '../../src/shared/worker-floors';
import type { WebhookConfig } from '../../src/shared/webhooks';

let runtimeInstalled = false;
/** The SDK runtime with only errors logged, installed once per test file. */
export function quietRuntime() {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // Already installed by an earlier test file in this Jest worker.
  }
}

export interface TestHarness {
  agent: AgentClient;
  client: Client;
  taskQueue: string;
  workspace: string;
  worker: AgentWorker;
  close(): Promise<void>;
}

/** A real worker on its own task queue against the shared dev server; only the model endpoint is fake. */
export async function startHarness(options: {
  modelBaseUrl: string;
  /** Another Temporal server than the shared one. */
  address?: string;
  tools?: AgentTool[];
  /** Replaces the built-in tools plus `tools`. */
  registry?: ToolRegistry;
  /** Tool lifecycle hooks, as an embedder registers them. */
  hooks?: ToolHooks[];
  /** The worker's own (global) tool policy. */
  toolPolicy?: ToolPolicy;
  /** Where the memory tools keep agents' notes; a fresh temporary directory when absent. */
  memoryDir?: string;
  /** For worker and client alike; `agentDataConverter()` from the environment when absent. */
  dataConverter?: DataConverter;
  /** A queue of its own when absent; given, a new harness can take over a stopped one's conversations. */
  taskQueue?: string;
  /** RAP tool servers to send close_thread and cancel_tool_call notices to. */
  rapToolsets?: string[];
  /** The operator's floors; by default workspaces within the harness's own. */
  floors?: Partial<WorkerFloors>;
  /** Approver keys: decisions must then be signed. */
  approverKeys?: ApproverKeys;
  approvalPolicy?: ApprovalPolicy;
  webhooks?: WebhookConfig[];
  /** A2A push notifications may reach loopback addresses (the tests' receivers). */
  a2aPushAllowPrivate?: boolean;
  gatewayUrl?: string;
  circuitBreakers?: ToolCircuitBreakers;
  /** Conversations keep the search attributes up to date (the test server has them registered). */
  searchAttributes?: boolean;
  /** Traces for worker and client alike. */
  tracing?: Tracing;
  /** How often heartbeats reach the server at most (the worker's default when absent). */
  heartbeatThrottleMs?: number;
  cancelRequests?: LocalCancelRequests;
  /** Where the worker hands model text to watchers of its own process (a private one makes it look like another process). */
  liveText?: LiveModelText;
  /** The worker's push endpoint on a free loopback port; `self-signed`: over TLS, with a certificate it makes. */
  liveEndpoint?: boolean | 'self-signed';
  /** The operator's daily token budgets per agent id, and the clock their days are counted by. */
  dailyTokenBudgets?: DailyTokenBudgets;
  dailyTokenClock?: () => number;
  /** The fleet's limits on the model endpoint: model calls take their turn from its limiter workflow. */
  modelLimiter?: ModelLimiterSettings;
  /** What the worker takes from its task queue (all by default). */
  serves?: 'all' | 'workflows' | 'activities';
  /** The worker's price table (AGENT_MODEL_PRICES). */
  prices?: ModelPrices;
  /** The API the worker calls models through, and the wires beyond Chat Completions. */
  api?: ModelApi;
  wires?: Partial<Record<ModelApi, ModelWire>>;
}): Promise<TestHarness> {
  const dataConverter = options.dataConverter ?? agentDataConverter();
  quietRuntime();
  const address = options.address ?? process.env.TEST_TEMPORAL_ADDRESS!;
  const taskQueue = options.taskQueue ?? `test-${randomUUID()}`;
  const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-ws-'));
  const memory = new MemoryStore(
    options.memoryDir ?? (await mkdtemp(path.join(os.tmpdir(), 'durable-agent-memory-'))),
  );
  const nativeConnection = await NativeConnection.connect({ address });
  const worker = await createAgentWorker({
    connection: nativeConnection,
    namespace: 'default',
    taskQueue,
    workflowBundlePath: process.env.TEST_WORKFLOW_BUNDLE,
    shutdownGraceTimeMs: 2_000,
    activities: {
      openai: new OpenAI({ baseURL: options.modelBaseUrl, apiKey: 'test', maxRetries: 0 }),
      defaultModel: 'scripted-model',
      tools: options.registry ?? new ToolRegistry([...builtinTools({ memory }), ...(options.tools ?? [])]),
      defaultWorkspace: workspace,
      ...(options.hooks ? { hooks: options.hooks } : {}),
      ...(options.rapToolsets ? { rapToolsets: options.rapToolsets } : {}),
      ...(options.floors ? { floors: options.floors } : {}),
      ...(options.approverKeys ? { approverKeys: options.approverKeys } : {}),
      ...(options.approvalPolicy ? { approvalPolicy: options.approvalPolicy } : {}),
      ...(options.webhooks ? { webhooks: options.webhooks } : {}),
      ...(options.a2aPushAllowPrivate ? { a2aPush: { allowPrivateNetwork: true } } : {}),
      ...(options.gatewayUrl ? { gatewayUrl: options.gatewayUrl } : {}),
      ...(options.circuitBreakers ? { circuitBreakers: options.circuitBreakers } : {}),
      ...(options.searchAttributes ? { searchAttributes: true } : {}),
      ...(options.cancelRequests ? { cancelRequests: options.cancelRequests } : {}),
      ...(options.liveText ? { liveText: options.liveText } : {}),
      ...(options.dailyTokenBudgets ? { dailyTokenBudgets: options.dailyTokenBudgets } : {}),
      ...(options.dailyTokenClock ? { dailyTokenClock: options.dailyTokenClock } : {}),
      ...(options.modelLimiter ? { limiter: fleetModelLimiter(options.modelLimiter) } : {}),
      ...(options.prices ? { prices: options.prices } : {}),
      ...(options.api ? { api: options.api } : {}),
      ...(options.wires ? { wires: options.wires } : {}),
    },
    ...(options.liveEndpoint
      ? {
          liveEndpoint: {
            host: '127.0.0.1',
            port: 0,
            ...(options.liveEndpoint === 'self-signed' ? { tls: 'self-signed' as const } : {}),
          },
        }
      : {}),
    ...(options.serves ? { serves: options.serves } : {}),
    ...(options.heartbeatThrottleMs ? { heartbeatThrottleMs: options.heartbeatThrottleMs } : {}),
    ...(options.toolPolicy ? { toolPolicy: options.toolPolicy } : {}),
    ...(options.tracing ? { tracing: options.tracing } : {}),
    dataConverter,
  });
  const running = worker.run();
  const connection = await Connection.connect({ address });
  const client = new Client({
    connection,
    namespace: 'default',
    dataConverter,
    ...(options.tracing ? { interceptors: { workflow: await tracingClientInterceptors() } } : {}),
  });
  return {
    agent: new AgentClient(client, taskQueue),
    client,
    taskQueue,
    workspace,
    worker,
    async close() {
      worker.shutdown();
      await running;
      await connection.close();
      await nativeConnection.close();
    },
  };
}

/** Polls until `check` returns a value; waits for a state, never for a fixed time. */
export async function waitFor<T>(
  check: () => Promise<T | undefined>,
  what: string,
  timeoutMs = 60_000,
  pollMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}
