import { type Connection, isGrpcServiceError } from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import { msToTs } from '@temporalio/common/lib/time';
import { SEARCH_ATTRIBUTE_TYPES } from '../shared/search-attributes';
import { ensureSearchAttributes } from './search-attribute-registration';

/** gRPC's ALREADY_EXISTS. */
const ALREADY_EXISTS = 6;
/** gRPC's NOT_FOUND: what a service answers for a namespace it has not loaded yet. */
const NOT_FOUND = 5;
/**
 * How long a newly registered namespace may take to be served: each service loads namespaces
 * every few seconds, and a loaded machine (a cluster starting beside a test suite) is slower.
 */
const NAMESPACE_SERVED_WITHIN_MS = 60_000;

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
  const customAttributes = await attributesOnceServed(connection, namespace);
  const missing = Object.keys(SEARCH_ATTRIBUTE_TYPES).filter(
    (name) => customAttributes?.[name] === undefined,
  );
  let why = '';
  if (!(await ensureSearchAttributes(connection, namespace, (line) => (why = line)))) throw new Error(why);
  if (missing.length > 0) log(`Registered search attributes ${missing.join(', ')}.`);
}

/**
 * The namespace's custom search attributes, once the frontend serves the namespace: registering it
 * writes it to the database, and the frontend answers NOT_FOUND until it next loads namespaces.
 */
async function attributesOnceServed(
  connection: Pick<Connection, 'operatorService'>,
  namespace: string,
): Promise<Record<string, unknown> | null | undefined> {
  const deadline = Date.now() + NAMESPACE_SERVED_WITHIN_MS;
  for (;;) {
    try {
      return (await connection.operatorService.listSearchAttributes({ namespace })).customAttributes;
    } catch (error) {
      if (!isGrpcServiceError(error) || error.code !== NOT_FOUND || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
