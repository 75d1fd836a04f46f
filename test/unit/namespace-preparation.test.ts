import type { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTE_TYPES } from '../../src/shared/search-attributes';
import { prepareNamespace } from '../../src/temporal-server/namespace-preparation';

/** A frontend that has the namespace in its database but serves it only from the `servedAfter`th look. */
function frontendLoadingNamespaces(servedAfter: number) {
  let looks = 0;
  const notFound = Object.assign(new Error('5 NOT_FOUND: Namespace default is not found.'), {
    code: 5,
    details: 'Namespace default is not found.',
    metadata: {},
  });
  const { INDEXED_VALUE_TYPE_KEYWORD: keyword, INDEXED_VALUE_TYPE_DATETIME: datetime } =
    temporal.api.enums.v1.IndexedValueType;
  const all = Object.fromEntries(
    Object.entries(SEARCH_ATTRIBUTE_TYPES).map(([name, type]) => [
      name,
      type === 'Keyword' ? keyword : datetime,
    ]),
  );
  const connection = {
    workflowService: {
      registerNamespace: async () => ({}),
      listWorkflowExecutions: async () => ({ executions: [] }),
      countWorkflowExecutions: async () => ({ count: 0 }),
    },
    operatorService: {
      listSearchAttributes: async () => {
        looks += 1;
        if (looks < servedAfter) throw notFound;
        return { customAttributes: all };
      },
      addSearchAttributes: async () => ({}),
    },
  };
  return { connection: connection as unknown as Connection, looks: () => looks };
}

test('a namespace just registered is waited for until the frontend serves it, not reported missing', async () => {
  const frontend = frontendLoadingNamespaces(3);
  const lines: string[] = [];
  await prepareNamespace(frontend.connection, 'default', '3 days', (line) => lines.push(line));
  expect(frontend.looks()).toBeGreaterThanOrEqual(3);
  expect(lines).toEqual(['Registered namespace default.']);
});
