import type { NativeConnection } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTE_TYPES } from '../shared/search-attributes';

const INDEXED_TYPE = {
  Keyword: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  Datetime: temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
} as const;

/**
 * Makes sure the server knows the conversation search attributes, registering the missing ones.
 * True when all are there with the right types: only then do conversations set them (setting an
 * unknown one would fail every workflow task). False, with the reason logged, when the server
 * refuses (a namespace the worker may not administer): conversations then run without them.
 */
export async function ensureSearchAttributes(
  connection: Pick<NativeConnection, 'operatorService'>,
  namespace: string,
  log: (message: string) => void,
): Promise<boolean> {
  try {
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
    const missing: Record<string, temporal.api.enums.v1.IndexedValueType> = {};
    for (const [name, type] of Object.entries(SEARCH_ATTRIBUTE_TYPES)) {
      const existing = customAttributes?.[name];
      if (existing === undefined) missing[name] = INDEXED_TYPE[type];
      else if (existing !== INDEXED_TYPE[type]) {
        log(
          `search attribute ${name} is registered with another type than ${type}: conversations will not set search attributes`,
        );
        return false;
      }
    }
    if (Object.keys(missing).length > 0) {
      await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: missing });
    }
    return true;
  } catch (error) {
    log(
      `could not register the conversation search attributes (${Object.keys(SEARCH_ATTRIBUTE_TYPES).join(', ')}): ` +
        `${(error as Error).message}; conversations run without them`,
    );
    return false;
  }
}
