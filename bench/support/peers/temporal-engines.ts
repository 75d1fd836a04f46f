import { randomUUID } from 'node:crypto';
import { type BenchContext, serversToMeasure } from '../context';
import { DrivenConversation } from '../driven-conversation';
import { measureRun } from '../history';
import { type Stack, durableStack, peerStack } from '../stacks';
import type { WorkerProcess } from '../worker-process';
import type { PeerConversation, PeerDeployment, PeerEngine } from './engine';

/**
 * The Temporal server the Temporal stacks are compared on: the run's self-hosted cluster
 * (PostgreSQL with its durable defaults, as the other engines' stores) when it has one, else the
 * embedded server (SQLite in memory), and what it is.
 */
function temporalServer(context: BenchContext): { on: BenchContext; about: string } {
  const server = serversToMeasure(context).at(-1)!;
  return {
    on: server.context,
    about:
      server.name === 'cluster'
        ? `the run's self-hosted Temporal cluster (four services, PostgreSQL with fsync on) at ${server.context.address}`
        : `the run's embedded Temporal server (SQLite in memory: nothing is fsynced) at ${server.context.address}`,
  };
}

/**
 * A stack on Temporal (durable-agent, the @temporalio/ai-sdk peer) as a peer engine: a deployment
 * is a task queue, a conversation a workflow, its state the encoded history of all its runs.
 */
function temporalEngine(
  context: BenchContext,
  about: string,
  stack: Stack,
  crashDirective: PeerEngine['crashDirective'],
  cannot: PeerEngine['cannot'] = {},
): PeerEngine {
  return {
    name: stack.name,
    crashDirective,
    cannot,
    start: async () => about,
    async deployment(name) {
      const taskQueue = `peers-${stack.name}-${name}-${randomUUID()}`;
      let service: WorkerProcess | undefined;
      const workflows = new Map<PeerConversation, DrivenConversation>();
      const deployment: PeerDeployment = {
        async startService() {
          service = await stack.startWorker(taskQueue);
          return service;
        },
        async open(id) {
          const driven = await DrivenConversation.start(context, stack, id, taskQueue);
          const conversation: PeerConversation = {
            id,
            get turns() {
              return driven.turns;
            },
            runTurn: async (directive) => {
              await driven.runTurn(directive);
            },
          };
          workflows.set(conversation, driven);
          return conversation;
        },
        async stateBytes(conversation) {
          const driven = workflows.get(conversation)!;
          let bytes = 0;
          for (const runId of driven.runIds)
            bytes += (await measureRun(stack.client, driven.id, runId)).bytes;
          return bytes;
        },
        async stop() {
          await service?.stop();
          service = undefined;
        },
      };
      return deployment;
    },
    stop: async () => undefined,
  };
}

/** durable-agent: the file tool `wait_file` (heartbeats, tried again) is the step the crash bench cuts off. */
export function durableAgentEngine(context: BenchContext): PeerEngine {
  const { on, about } = temporalServer(context);
  return temporalEngine(on, `durable-agent's worker on Node ${process.version}; ${about}`, durableStack(on), {
    tool: 'wait_file',
  });
}

/** The @temporalio/ai-sdk peer (bench/ai-sdk-peer), whose tool activity reports its start. */
export function aiSdkEngine(context: BenchContext): PeerEngine {
  const { on, about } = temporalServer(context);
  return temporalEngine(
    on,
    `@temporalio/ai-sdk 1.23.0, ai 7, Temporal SDK 1.23.0 on Node 22; ${about}`,
    peerStack(on),
    { tool: 'sleep', args: { ms: 5_000 } },
  );
}
