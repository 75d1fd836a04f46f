import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { WorkflowClient } from '@temporalio/client';
import { DefaultLogger } from '@temporalio/worker';
import { bundleAgentWorkflows } from '../src/worker/workflow-bundle';
import type { BenchContext } from './support/context';
import { DrivenConversation } from './support/driven-conversation';
import { type Stack, bareStack, durableStack } from './support/stacks';
import { scratchDir } from './support/scratch';
import { mb, table } from './support/stats';

export interface WorkflowMemoryRow {
  workflow: string;
  cached: number;
  rssIdleMb: number;
  rssEndMb: number;
  heapUsedEndMb: number;
  kbPerWorkflow: number;
}

export interface WorkflowMemoryResult {
  rows: WorkflowMemoryRow[];
  table: string;
}

const STARTS_AT_ONCE = 50;

async function inBatches(count: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(STARTS_AT_ONCE, count) }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

/**
 * `count` workflows cached on one fresh worker process, each after its first workflow task (or
 * first turn), and the worker's resident memory before and after, per workflow.
 */
async function measure(
  stack: Stack,
  workflow: string,
  count: number,
  open: (taskQueue: string, index: number) => Promise<void>,
  workerEnv: Record<string, string> = {},
): Promise<WorkflowMemoryRow> {
  const taskQueue = `bench-memory-${stack.name}-${randomUUID()}`;
  const worker = await stack.startWorker(taskQueue, workerEnv);
  try {
    const idle = await worker.memory(true);
    await inBatches(count, (index) => open(taskQueue, index));
    const end = await worker.memory();
    return {
      workflow,
      cached: count,
      rssIdleMb: mb(idle.rss),
      rssEndMb: mb(end.rss),
      heapUsedEndMb: mb(end.heapUsed),
      kbPerWorkflow: Math.round((end.rss - idle.rss) / 1024 / count),
    };
  } finally {
    await worker.stop();
  }
}

/**
 * Bench 12: what a worker holds for each cached workflow, from the least a Temporal TypeScript
 * workflow can be (a wait and a query) through the bare turn loop to a durable-agent conversation,
 * 500 of each on a fresh worker: where the floor under a conversation's memory lies.
 */
export async function workflowMemory(context: BenchContext): Promise<WorkflowMemoryResult> {
  const count = context.quick ? 200 : 500;
  const bare = bareStack(context);
  const durable = durableStack(context);
  const rows: WorkflowMemoryRow[] = [];
  const startIdle = (client: WorkflowClient) => async (taskQueue: string, index: number) => {
    const handle = await client.start('idleWorkflow', {
      workflowId: `memory-idle-${index}-${randomUUID()}`,
      taskQueue,
    });
    // Answered by the worker once the workflow has run its first task and sits in the cache.
    await handle.query<boolean>('ready');
  };
  rows.push(
    await measure(bare, 'empty workflow (a wait and a query)', count, startIdle(bare.client.workflow)),
  );
  context.log(`  empty workflow: ${rows.at(-1)!.kbPerWorkflow} KB each`);
  const agentBundle = path.join(scratchDir('memory-bundle-'), 'agent-idle.js');
  await writeFile(
    agentBundle,
    await bundleAgentWorkflows({
      workflowsPath: require.resolve('./support/agent-idle-workflows'),
      logger: new DefaultLogger('ERROR'),
    }),
  );
  rows.push(
    await measure(
      durable,
      "empty workflow in durable-agent's bundle",
      count,
      startIdle(durable.client.workflow),
      { BENCH_WORKFLOW_BUNDLE: agentBundle },
    ),
  );
  context.log(`  empty workflow, durable-agent's bundle: ${rows.at(-1)!.kbPerWorkflow} KB each`);
  for (const stack of [bare, durable]) {
    rows.push(
      await measure(stack, `${stack.name} after one turn`, count, async (taskQueue, index) => {
        const conversation = await DrivenConversation.start(
          context,
          stack,
          `memory-${stack.name}-${index}-${randomUUID()}`,
          taskQueue,
        );
        await conversation.runTurn();
      }),
    );
    context.log(`  ${stack.name}: ${rows.at(-1)!.kbPerWorkflow} KB each`);
  }
  return {
    rows,
    table: table(
      [
        'cached workflow',
        'workflows',
        'worker RSS idle MB',
        'RSS with them MB',
        'heap used MB',
        'KB per workflow',
      ],
      rows.map((row) => [
        row.workflow,
        row.cached,
        row.rssIdleMb,
        row.rssEndMb,
        row.heapUsedEndMb,
        row.kbPerWorkflow,
      ]),
    ),
  };
}
