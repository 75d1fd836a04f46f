import { Connection, isGrpcServiceError } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { grpc } from '@temporalio/proto';
import { SEARCH_ATTRIBUTE_TYPES } from '../../shared/search-attributes';
import { ensureSearchAttributes } from '../search-attribute-registration';

/** The name under which the frontend reports its own health. */
const WORKFLOW_SERVICE = 'temporal.api.workflowservice.v1.WorkflowService';
const GRPC_ALREADY_EXISTS = 6;
/** How long the namespace keeps closed workflows. */
/** How long a closed conversation's history is kept (docker-compose.yml registers the same). */
export const NAMESPACE_RETENTION = '72h';
/**
 * A service sees a namespace's new search attributes when it next reloads its namespaces
 * (system.namespaceCacheRefreshInterval, 2 s); this is that with a margin.
 */
const NAMESPACE_REFRESH_MS = 3_000;

export interface FrontendHealth {
  serving: boolean;
  /** SERVING, NOT_SERVING, or why there was no answer. */
  detail: string;
}

/** What the frontend at `address` says of its health (the gRPC health check), within `timeoutMs`. */
export async function frontendHealth(address: string, timeoutMs = 3_000): Promise<FrontendHealth> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address, connectTimeout: timeoutMs });
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

/**
 * Registers `namespace` (kept if it exists) and the conversation search attributes in it, so the
 * cluster is ready for conversations with search attributes from their first workflow task.
 */
export async function prepareNamespace(
  address: string,
  namespace: string,
  log: (line: string) => void,
): Promise<void> {
  const connection = await Connection.connect({ address });
  try {
    try {
      await connection.workflowService.registerNamespace({
        namespace,
        workflowExecutionRetentionPeriod: msToTs(NAMESPACE_RETENTION),
      });
      log(`Registered namespace ${namespace}.`);
    } catch (error) {
      if (!isGrpcServiceError(error) || error.code !== GRPC_ALREADY_EXISTS) throw error;
    }
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
    const missing = Object.keys(SEARCH_ATTRIBUTE_TYPES).filter(
      (name) => customAttributes?.[name] === undefined,
    );
    let why = '';
    if (!(await ensureSearchAttributes(connection, namespace, (line) => (why = line)))) {
      throw new Error(why);
    }
    if (missing.length > 0) {
      log(`Registered search attributes ${missing.join(', ')}.`);
      await new Promise((resolve) => setTimeout(resolve, NAMESPACE_REFRESH_MS));
    }
  } finally {
    await connection.close();
  }
}
