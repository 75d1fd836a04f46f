import { type Connection, isGrpcServiceError } from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import { msToTs } from '@temporalio/common/lib/time';
import { SEARCH_ATTRIBUTE_TYPES } from '../shared/search-attributes';
import { ensureSearchAttributes } from './search-attribute-registration';

/** gRPC's ALREADY_EXISTS. */
const ALREADY_EXISTS = 6;

/**
 * Registers `namespace` (kept if it exists) keeping closed workflows for `retention`, then the
 * conversation search attributes in it, and waits until they are served: from then on a
 * conversation may set them from its first workflow task. What it registered is told to `log`.
 */
export async function prepareNamespace(
  connection: Pick<Connection, 'workflowService' | 'operatorService'>,
  namespace: string,
  retention: Duration,
  log: (line: string) => void = () => undefined,
): Promise<void> {
  try {
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs(retention),
    });
    log(`Registered namespace ${namespace}.`);
  } catch (error) {
    if (!isGrpcServiceError(error) || error.code !== ALREADY_EXISTS) throw error;
  }
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = Object.keys(SEARCH_ATTRIBUTE_TYPES).filter(
    (name) => customAttributes?.[name] === undefined,
  );
  let why = '';
  if (!(await ensureSearchAttributes(connection, namespace, (line) => (why = line)))) throw new Error(why);
  if (missing.length > 0) log(`Registered search attributes ${missing.join(', ')}.`);
}
