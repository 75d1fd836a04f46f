import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { userMessageSignal } from '../../src/shared/conversation-api';
import type { ConversationOptionsInput } from '../../src/shared/conversation-options';
import { WORKFLOW_TASK_TIMEOUT_MS } from '../../src/shared/workflow-task-bounds';
import type { conversation } from '../../src/workflows/conversation';
import type { BenchContext } from './context';
import { type Directive, directiveText } from './model-server';
import type { WorkerEnv } from './protocol';
import { REPO_ROOT, type WorkerProcess, startWorkerProcess } from './worker-process';

/** One of the systems compared: how to run its worker and drive its conversations. */
export interface Stack {
  name: 'durable-agent' | 'ai-sdk-peer' | 'temporal-bare';
  /** Activity type of a model call, which a turn's end is found by. */
  modelActivity: string;
  client: Client;
  /** `env` adds worker settings (WorkerEnv's optional ones) where the stack has them. */
  startWorker(taskQueue: string, env?: Partial<WorkerEnv>): Promise<WorkerProcess>;
  startConversation(id: string, taskQueue: string, options?: ConversationOptionsInput): Promise<void>;
  send(id: string, directive: Directive): Promise<void>;
}

export function durableStack(context: BenchContext): Stack {
  const client = context.durableClient;
  return {
    name: 'durable-agent',
    modelActivity: 'callModel',
    client,
    startWorker: (taskQueue, env = {}) =>
      startWorkerProcess(path.join(__dirname, 'agent-worker.ts'), {
        BENCH_TEMPORAL_ADDRESS: context.address,
        BENCH_TASK_QUEUE: taskQueue,
        BENCH_MODEL_URL: context.model.baseUrl,
        BENCH_WORKFLOW_BUNDLE: context.durableBundle,
        ...env,
      }),
    async startConversation(id, taskQueue, options = {}) {
      // As AgentClient starts one.
      await client.workflow.start<typeof conversation>('conversation', {
        workflowId: id,
        taskQueue,
        args: [{ options }],
        workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT_MS,
      });
    },
    async send(id, directive) {
      await client.workflow
        .getHandle(id)
        .signal(userMessageSignal, { text: directiveText(directive), messageId: randomUUID() });
    },
  };
}

export function peerStack(context: BenchContext): Stack {
  const client = context.peerClient;
  return {
    name: 'ai-sdk-peer',
    modelActivity: 'invokeModel',
    client,
    startWorker: (taskQueue) =>
      startWorkerProcess(
        path.join(REPO_ROOT, 'bench', 'ai-sdk-peer', 'src', 'worker.ts'),
        {
          BENCH_TEMPORAL_ADDRESS: context.address,
          BENCH_TASK_QUEUE: taskQueue,
          BENCH_MODEL_URL: context.model.baseUrl,
          BENCH_WORKFLOW_BUNDLE: context.peerBundle,
        },
        context.peerNode,
      ),
    async startConversation(id, taskQueue) {
      await client.workflow.start('peerConversation', { workflowId: id, taskQueue, args: [] });
    },
    async send(id, directive) {
      await client.workflow.getHandle(id).signal('userMessage', { text: directiveText(directive) });
    },
  };
}

/** The minimal durable loop on Temporal (bare-workflow.ts): a baseline, not a contender. */
export function bareStack(context: BenchContext): Stack {
  const client = context.peerClient;
  return {
    name: 'temporal-bare',
    modelActivity: 'callModel',
    client,
    startWorker: (taskQueue) =>
      startWorkerProcess(path.join(__dirname, 'bare-worker.ts'), {
        BENCH_TEMPORAL_ADDRESS: context.address,
        BENCH_TASK_QUEUE: taskQueue,
        BENCH_MODEL_URL: context.model.baseUrl,
        BENCH_WORKFLOW_BUNDLE: context.bareBundle,
      }),
    async startConversation(id, taskQueue) {
      await client.workflow.start('bareConversation', { workflowId: id, taskQueue, args: [] });
    },
    async send(id, directive) {
      await client.workflow.getHandle(id).signal('userMessage', { text: directiveText(directive) });
    },
  };
}
