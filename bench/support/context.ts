import { Client, Connection } from '@temporalio/client';
import { agentDataConverter } from '../../src/worker/data-converter';
import type { AnswerHub } from './driven-conversation';
import type { BenchModelServer } from './model-server';
import { startBenchServer } from './server';

/** A Temporal server's frontend and the runner's clients of it. */
export interface ServerClients {
  address: string;
  /** Client with durable-agent's data converter. */
  durableClient: Client;
  /** Client with the default data converter, for the peer. */
  peerClient: Client;
}

/** What every bench gets from the runner: the embedded server's address and clients, and the rest. */
export interface BenchContext extends ServerClients {
  /**
   * The self-hosted cluster (`durable-agent cluster`) that the benches comparing servers measure on
   * beside the embedded server (`serversToMeasure`); undefined with `--no-cluster` or without PostgreSQL.
   */
  cluster?: ServerClients;
  model: BenchModelServer;
  answers: AnswerHub;
  durableBundle: string;
  peerBundle: string;
  /** The Node binary of the peers that need a newer Node than the runner's (PEER_NODE_VERSION). */
  peerNode: string;
  /** The bare Temporal loop's workflow bundle (bare-workflow.ts). */
  bareBundle: string;
  /** Dynamic config values of the embedded server (`--server-config`), for experiments. */
  serverConfig: Record<string, unknown>;
  /** Fewer turns and levels, for trying the benches out. */
  quick: boolean;
  log(line: string): void;
}

/** Clients of the frontend at `address`, on one connection, which `close` closes. */
export async function connectTo(
  address: string,
): Promise<ServerClients & { connection: Connection; close(): Promise<void> }> {
  const connection = await Connection.connect({ address });
  return {
    address,
    connection,
    durableClient: new Client({ connection, namespace: 'default', dataConverter: agentDataConverter() }),
    peerClient: new Client({ connection, namespace: 'default' }),
    close: () => connection.close(),
  };
}

/** What the cluster's rows add to their label. */
export const CLUSTER_SUFFIX = ' (cluster)';

/** A server a bench measures on, and the context that points the bench at it. */
export interface MeasuredServer {
  name: 'embedded server' | 'cluster';
  /** Added to a row's label: nothing for the embedded server, CLUSTER_SUFFIX. */
  suffix: string;
  context: BenchContext;
}

/**
 * The servers the benches comparing servers (1, 3, 8) measure on, one after the other: the
 * embedded server every bench shares, then the cluster when the run has one.
 */
export function serversToMeasure(context: BenchContext): MeasuredServer[] {
  const servers: MeasuredServer[] = [{ name: 'embedded server', suffix: '', context }];
  if (context.cluster) {
    const { address, durableClient, peerClient } = context.cluster;
    servers.push({
      name: 'cluster',
      suffix: CLUSTER_SUFFIX,
      context: { ...context, address, durableClient, peerClient, cluster: undefined },
    });
  }
  return servers;
}

/**
 * Runs `body` against an embedded server of its own, started with `dynamicConfig`: for benches
 * that need the server configured differently from the one every other bench shares.
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
  const clients = await connectTo(server.address);
  try {
    const { address, durableClient, peerClient } = clients;
    return await body({ ...context, address, durableClient, peerClient, cluster: undefined });
  } finally {
    await clients.close();
    await server.stop();
  }
}
