import { isGrpcServiceError } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTE_TYPES } from '../shared/search-attributes';

const INDEXED_TYPE = {
  Keyword: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  Datetime: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
} as const;

/**
 * What adding attributes answers when another process adds them at the same moment (a worker
 * starting beside a server or cluster that finishes its own start): ALREADY_EXISTS, or on SQL
 * visibility UNAVAILABLE ("Generated search attributes mapping unavailable"), the namespace's
 * attribute mapping having changed under it. Both are retried after looking again at what is missing.
 */
const RACE_CODES: ReadonlySet<number> = new Set([6, 14]);
const ADD_ATTEMPTS = 5;
/**
 * How long newly registered attributes may take to be served: each service sees them when it
 * next reloads its namespaces (every 2 s by default).
 */
const SERVED_WITHIN_MS = 10_000;

/** A visibility query the frontend refuses until it knows every conversation search attribute. */
const SEARCH_ATTRIBUTES_QUERY = Object.keys(SEARCH_ATTRIBUTE_TYPES)
  .map((name) => `${name} IS NULL`)
  .join(' AND ');

/**
 * Makes sure the server knows the conversation search attributes, registering the missing ones,
 * and waits until they are served. True when all are there with the right types: only then do
 * conversations set them (setting an unknown one would fail every workflow task). False, with the
 * reason logged, when the server refuses (a namespace the worker may not administer): conversations
 * then run without them. Another process registering them at the same moment (a server finishing
 * its start) is no refusal.
 */
export async function ensureSearchAttributes(
  connection: Pick<NativeConnection, 'operatorService' | 'workflowService'>,
  namespace: string,
  log: (message: string) => void,
): Promise<boolean> {
  try {
    for (let attempt = 1; ; attempt++) {
      const missing = await missingSearchAttributes(connection, namespace, log);
      if (missing === 'conflict') return false;
      if (Object.keys(missing).length === 0) break;
      try {
        await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
        break;
      } catch (error) {
        if (!isGrpcServiceError(error) || !RACE_CODES.has(error.code) || attempt >= ADD_ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
      }
    }
    await searchAttributesServed(connection, namespace);
    return true;
  } catch (error) {
    log(
      `could not register the conversation search attributes (${Object.keys(SEARCH_ATTRIBUTE_TYPES).join(', ')}): ` +
        `${(error as Error).message}; conversations run without them`,
    );
    return false;
  }
}

/** The conversation attributes the namespace lacks, or 'conflict' (logged) when one has another type. */
async function missingSearchAttributes(
  connection: Pick<NativeConnection, 'operatorService'>,
  namespace: string,
  log: (message: string) => void,
): Promise<Record<string, temporal.api.enums.v1.IndexedValueType> | 'conflict'> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  const missing: Record<string, temporal.api.enums.v1.IndexedValueType> = {};
  for (const [name, type] of Object.entries(SEARCH_ATTRIBUTE_TYPES)) {
    const existing = customAttributes?.[name];
    if (existing === undefined) missing[name] = INDEXED_TYPE[type];
    else if (existing !== INDEXED_TYPE[type]) {
      log(
        `search attribute ${name} is registered with another type than ${type}: conversations will not set search attributes`,
      );
      return 'conflict';
    }
  }
  return missing;
}

/** Waits until a visibility query on every conversation attribute is served; throws after SERVED_WITHIN_MS. */
export async function searchAttributesServed(
  connection: Pick<NativeConnection, 'workflowService'>,
  namespace: string,
  withinMs = SERVED_WITHIN_MS,
): Promise<void> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      await connection.workflowService.listWorkflowExecutions({
        namespace,
        pageSize: 1,
        query: SEARCH_ATTRIBUTES_QUERY,
      });
      return;
    } catch (error) {
      if (Date.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
