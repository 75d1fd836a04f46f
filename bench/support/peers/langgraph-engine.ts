import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { BenchContext } from '../context';
import { REPO_ROOT, type WorkerProcess, startWorkerProcess } from '../worker-process';
import { peerVersion } from './dbos-engine';
import type { PeerEngine } from './engine';
import { ipcConversation } from './ipc-conversation';
import { rowBytes } from './row-bytes';

const PEER_DIR = path.join(REPO_ROOT, 'bench', 'langgraph-peer');

/**
 * LangGraph JS: the prebuilt ReAct agent in the service process (bench/langgraph-peer),
 * checkpointed to the bench's PostgreSQL. A deployment is the process now running; every process
 * reads a thread's latest checkpoint when it is invoked. The stored state is the thread's
 * checkpoints, blobs and pending writes.
 */
export function langGraphEngine(
  context: BenchContext,
  postgres: () => Promise<{ about: string; database(name: string): Promise<string> }>,
): PeerEngine {
  let url = '';
  return {
    name: 'langgraph',
    crashDirective: { tool: 'sleep', args: { ms: 5_000 } },
    cannot: {
      crash:
        'LangGraph does not pick up a run cut off by a crash by itself: the thread stays at its last ' +
        'checkpoint until the application invokes it again',
    },
    async start() {
      const server = await postgres();
      url = await server.database('langgraph');
      const versions = [
        '@langchain/langgraph',
        '@langchain/langgraph-checkpoint-postgres',
        '@langchain/openai',
      ]
        .map((name) => `${name} ${peerVersion(PEER_DIR, name)}`)
        .join(', ');
      const node = execFileSync(context.peerNode, ['--version'], { encoding: 'utf8' }).trim();
      return `${versions}: createReactAgent, PostgresSaver, durability "sync", on Node ${node}; ${server.about}`;
    },
    async deployment() {
      let service: WorkerProcess | undefined;
      return {
        async startService() {
          service = await startWorkerProcess(
            path.join(PEER_DIR, 'src', 'service.ts'),
            { BENCH_MODEL_URL: context.model.baseUrl, BENCH_DATABASE_URL: url },
            context.peerNode,
          );
          return service;
        },
        async open(id) {
          return ipcConversation(id, () => service);
        },
        stateBytes: (conversation) => rowBytes(url, 'public', ['thread_id'], conversation.id),
        async stop() {
          await service?.stop();
          service = undefined;
        },
      };
    },
    stop: async () => undefined,
  };
}
