import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { BenchContext } from '../context';
import { REPO_ROOT, type WorkerProcess, startWorkerProcess } from '../worker-process';
import type { PeerEngine } from './engine';
import { ipcConversation } from './ipc-conversation';
import { rowBytes } from './row-bytes';

const PEER_DIR = path.join(REPO_ROOT, 'bench', 'dbos-peer');

/** The installed version of `name` in the peer package at `dir`. */
export function peerVersion(dir: string, name: string): string {
  const manifest = readFileSync(path.join(dir, 'node_modules', name, 'package.json'), 'utf8');
  return (JSON.parse(manifest) as { version: string }).version;
}

/**
 * DBOS Transact: the library in the service process (bench/dbos-peer), its system database on the
 * bench's PostgreSQL. A deployment is a DBOS application (its name), whose next process recovers
 * the workflows the previous one left pending. The stored state is the rows DBOS keeps for the
 * conversation's workflow (its status, step outputs, messages, events).
 */
export function dbosEngine(
  context: BenchContext,
  postgres: () => Promise<{ about: string; database(name: string): Promise<string> }>,
): PeerEngine {
  let url = '';
  return {
    name: 'dbos',
    crashDirective: { tool: 'sleep', args: { ms: 5_000 } },
    cannot: {},
    async start() {
      const version = peerVersion(PEER_DIR, '@dbos-inc/dbos-sdk');
      const server = await postgres();
      url = await server.database('dbos');
      return (
        `@dbos-inc/dbos-sdk ${version} (its defaults: the system database's pool, no step retries), ` +
        `in the service process on Node ${process.version}; ${server.about}`
      );
    },
    async deployment(name) {
      const app = `bench-${name}-${Date.now().toString(36)}`;
      let service: WorkerProcess | undefined;
      return {
        async startService() {
          service = await startWorkerProcess(path.join(PEER_DIR, 'src', 'service.ts'), {
            BENCH_MODEL_URL: context.model.baseUrl,
            BENCH_APP_NAME: app,
            BENCH_DATABASE_URL: url,
          });
          return service;
        },
        async open(id) {
          if (!service) throw new Error('no DBOS service runs');
          await service.call({ method: 'open', conversationId: id });
          return ipcConversation(id, () => service);
        },
        stateBytes: (conversation) =>
          rowBytes(url, 'dbos', ['workflow_uuid', 'destination_uuid'], conversation.id),
        async stop() {
          await service?.stop();
          service = undefined;
        },
      };
    },
    stop: async () => undefined,
  };
}
