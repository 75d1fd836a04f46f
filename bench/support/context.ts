import { Client, Connection } from '@temporalio/client';
import { agentDataConverter } from '../../src/worker/data-converter';
import type { AnswerHub } from './driven-conversation';
import type { BenchModelServer } from './model-server';
import { startBenchServer } from './server';

/** What every bench gets from the runner. */
export interface BenchContext {
  address: string;
  /** Client with durable-agent's data converter. */
  durableClient: Client;
  /** Client with the default data converter, for the peer. */
  peerClient: Client;
  model: BenchModelServer;
  answers: AnswerHub;
  durableBundle: string;
  peerBundle: string;
  /** The bare Temporal loop's workflow bundle (bare-workflow.ts). */
  bareBundle: string;
  /** Dynamic config values of the dev server (`--server-config`), for experiments. */
  serverConfig: Record<string, unknown>;
  /** Fewer turns and levels, for trying the benches out. */
  quick: boolean;
  log(line: string): void;
}

/**
 * Runs `body` against a dev server of its own, started with `dynamicConfig`: for benches that
 * need the server configured differently from the one every other bench shares.
 */
export async function withServer<T>(
  context: BenchContext,
  dynamicConfig: Record<string, unknown>,
  body: (context: BenchContext) => Promise<T>,
): Promise<T> {
  const server = await startBenchServer({
    dynamicConfig: { ...context.serverConfig, ...dynamicConfig },
    log: context.log,
  });
  const connection = await Connection.connect({ address: server.address });
  try {
    return await body({
      ...context,
      address: server.address,
      durableClient: new Client({ connection, namespace: 'default', dataConverter: agentDataConverter() }),
      peerClient: new Client({ connection, namespace: 'default' }),
    });
  } finally {
    await connection.close();
    await server.stop();
  }
}
