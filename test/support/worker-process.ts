/**
 * A worker in its own process, so a test can SIGKILL it. Configured by environment:
 * TEST_TEMPORAL_ADDRESS, TEST_WORKFLOW_BUNDLE, TASK_QUEUE, OPENAI_BASE_URL, WORKSPACE, MARKER_DIR,
 * AGENT_DEPLOYMENT_NAME with AGENT_BUILD_ID for a versioned worker, AGENT_STICKY_QUEUE_TIMEOUT_MS,
 * WORKER_IDENTITY (a worker that says it runs on another machine: `<pid>@<host>` of another host), and
 * the fleet model limits (AGENT_MODEL_MAX_CONCURRENT, …), approver keys and the approval policy
 * (DURABLE_AGENT_APPROVER_KEYS, AGENT_APPROVAL_POLICY) and remote A2A agents (DURABLE_AGENT_A2A_AGENTS)
 * as a worker reads them.
 */
import { access, appendFile } from 'node:fs/promises';
import path from 'node:path';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import OpenAI from 'openai';
import { z } from 'zod';
import type { ToolHooks } from '../../src/tools/tool-hooks';
import { builtinTools } from '../../src/tools/builtin/builtin-tools';
import { ToolRegistry } from '../../src/tools/registry';
import { defineTool, textResult } from '../../src/tools/tool';
import { createAgentWorker } from '../../src/worker/create-worker';
import { deploymentVersionFromEnv } from '../../src/worker/deployment-settings';
import { webhooksFromEnv } from '../../src/worker/webhook-settings';
import { approvalPolicyFromEnv } from '../../src/worker/approval-policy-settings';
import { approverKeysFromEnv } from '../../src/worker/floor-settings';
import { fleetModelLimiter } from '../../src/activities/model-lease';
import { modelLimiterFromEnv } from '../../src/worker/model-limit-settings';
import { RemoteA2AToolSource } from '../../src/a2a-remote/remote-a2a-tool-source';
import { remoteAgentsFromEnv } from '../../src/a2a-remote/remote-agents-config';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

/**
 * Counts slowly, heartbeating; appends a line per attempt to MARKER_DIR/attempts so the test sees
 * each start. `local_count` is the same tool run as a local activity.
 */
const countTool = (name: string, local: boolean) =>
  defineTool({
    name,
    label: 'Slow count',
    description: 'Counts to n, one step every 100 ms.',
    parameters: z.object({ n: z.number().int().min(1) }),
    category: 'other',
    idempotent: true,
    local,
    risk: 'low',
    heartbeatTimeoutMs: 2_000,
    retry: { initialIntervalMs: 200 },
    async execute(toolCallId, params, signal, onUpdate) {
      await appendFile(path.join(env('MARKER_DIR'), 'attempts'), `${process.pid} ${toolCallId}\n`);
      // While MARKER_DIR/hold exists the count does not finish, so a test can kill the worker mid-call
      // however slowly the machine runs.
      for (let step = 1; step <= params.n || (await exists(path.join(env('MARKER_DIR'), 'hold'))); step++) {
        if (signal.aborted) throw signal.reason;
        await new Promise((resolve) => setTimeout(resolve, 100));
        onUpdate({ details: { step: Math.min(step, params.n) } });
      }
      return textResult(`counted to ${params.n}`);
    },
  });

/** While MARKER_DIR/hold exists, a `write` that has written does not return: a worker killed then dies mid-call. */
const holdWrites: ToolHooks = {
  async afterToolCall({ toolName }) {
    if (toolName !== 'write') return;
    while (await exists(path.join(env('MARKER_DIR'), 'hold'))) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  },
};

async function main() {
  Runtime.install({ logger: new DefaultLogger('ERROR') });
  const modelLimiter = modelLimiterFromEnv(process.env);
  const approverKeys = approverKeysFromEnv(process.env);
  const remoteAgents = remoteAgentsFromEnv(process.env);
  const approvalPolicy = approvalPolicyFromEnv(process.env, approverKeys);
  const connection = await NativeConnection.connect({ address: env('TEST_TEMPORAL_ADDRESS') });
  const deployment = deploymentVersionFromEnv(process.env);
  const stickyQueueTimeoutMs = process.env.AGENT_STICKY_QUEUE_TIMEOUT_MS;
  const worker = await createAgentWorker({
    connection,
    namespace: 'default',
    taskQueue: env('TASK_QUEUE'),
    workflowBundlePath: env('TEST_WORKFLOW_BUNDLE'),
    activities: {
      openai: new OpenAI({ baseURL: env('OPENAI_BASE_URL'), apiKey: 'test', maxRetries: 0 }),
      defaultModel: 'scripted-model',
      tools: new ToolRegistry(
        [...builtinTools(), countTool('slow_count', false), countTool('local_count', true)],
        remoteAgents.length ? [new RemoteA2AToolSource(remoteAgents)] : [],
      ),
      defaultWorkspace: env('WORKSPACE'),
      hooks: [holdWrites],
      webhooks: webhooksFromEnv(process.env),
      ...(approverKeys ? { approverKeys } : {}),
      ...(approvalPolicy ? { approvalPolicy } : {}),
      ...(modelLimiter ? { limiter: fleetModelLimiter(modelLimiter) } : {}),
    },
    ...(deployment ? { deployment } : {}),
    ...(stickyQueueTimeoutMs ? { stickyQueueTimeoutMs: Number(stickyQueueTimeoutMs) } : {}),
    ...(process.env.WORKER_IDENTITY ? { identity: process.env.WORKER_IDENTITY } : {}),
  });
  const running = worker.run();
  process.stdout.write('ready\n');
  await running;
}

main().catch((error) => {
  process.stderr.write(`${(error as Error).stack}\n`);
  process.exit(1);
});

function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}
