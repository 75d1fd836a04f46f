import { Connection } from '@temporalio/client';
import { grpc } from '@temporalio/proto';
import type { TemporalConnectionOptions } from '../../client/temporal-connection-options';
import { prepareNamespace } from '../namespace-preparation';

/** The name under which the frontend reports its own health. */
const WORKFLOW_SERVICE = 'temporal.api.workflowservice.v1.WorkflowService';
/** How long a closed conversation's history is kept (docker-compose.yml registers the same). */
export const NAMESPACE_RETENTION = '72h';

export interface FrontendHealth {
  serving: boolean;
  /** SERVING, NOT_SERVING, or why there was no answer. */
  detail: string;
}

/**
 * What the frontend at `address` says of its health (the gRPC health check), within `timeoutMs`;
 * `options` carry the TLS of a cluster that serves it.
 */
export async function frontendHealth(
  address: string,
  timeoutMs = 3_000,
  options?: TemporalConnectionOptions,
): Promise<FrontendHealth> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address, ...options, connectTimeout: timeoutMs });
    const { status } = await connection.withDeadline(Date.now() + timeoutMs, () =>
      connection!.healthService.check({ service: WORKFLOW_SERVICE }),
    );
    const serving = grpc.health.v1.HealthCheckResponse.ServingStatus;
    return {
      serving: status === serving.SERVING,
      detail: serving[status ?? serving.UNKNOWN] ?? String(status),
    };
  } catch (error) {
    return { serving: false, detail: `no answer: ${(error as Error).message}` };
  } finally {
    await connection?.close();
  }
}

/** `prepareNamespace` on the cluster's frontend at `address`. */
export async function prepareClusterNamespace(
  address: string,
  namespace: string,
  log: (line: string) => void,
  options?: TemporalConnectionOptions,
): Promise<void> {
  const connection = await Connection.connect({ address, ...options });
  try {
    await prepareNamespace(connection, namespace, NAMESPACE_RETENTION, log);
  } finally {
    await connection.close();
  }
}
