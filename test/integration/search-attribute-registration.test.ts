import { randomUUID } from 'node:crypto';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { SEARCH_ATTRIBUTE_TYPES } from '../../src/shared/search-attributes';
import { ensureSearchAttributes } from '../../src/temporal-server/search-attribute-registration';

// A worker starting beside `cluster start` or `server` registers the attributes at the same moment
// as they do; on SQL visibility the loser of that race is answered UNAVAILABLE, not ALREADY_EXISTS.
test('processes registering the conversation search attributes at the same moment all succeed', async () => {
  const connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  try {
    const namespace = `attributes-${randomUUID()}`;
    await connection.workflowService.registerNamespace({
      namespace,
      workflowExecutionRetentionPeriod: msToTs('1 day'),
    });
    await servedNamespace(connection, namespace);
    const said: string[] = [];
    const registered = await Promise.all(
      Array.from({ length: 4 }, () =>
        ensureSearchAttributes(connection, namespace, (line) => said.push(line)),
      ),
    );
    expect({ registered, said }).toEqual({ registered: [true, true, true, true], said: [] });
    const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
    expect(Object.keys(customAttributes ?? {}).sort()).toEqual(Object.keys(SEARCH_ATTRIBUTE_TYPES).sort());
  } finally {
    await connection.close();
  }
});

async function servedNamespace(connection: Connection, namespace: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await connection.operatorService.listSearchAttributes({ namespace });
      return;
    } catch (error) {
      if (attempt >= 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}
