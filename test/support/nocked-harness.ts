import nock from 'nock';
import type { AgentTool } from '../../src/tools/tool';
import { NOCK_MODEL_URL } from './nock-model';
import { type TestHarness, startHarness } from './test-worker';

/**
 * Registers Jest hooks for a file whose model endpoint is faked by nock: one worker for the file,
 * every other host refused except the loopback Temporal server. Returns the harness getter.
 */
export function useNockedHarness(
  tools: AgentTool[],
  worker: Pick<
    Parameters<typeof startHarness>[0],
    | 'hooks'
    | 'toolPolicy'
    | 'floors'
    | 'approverKeys'
    | 'approvalPolicy'
    | 'circuitBreakers'
    | 'searchAttributes'
    | 'heartbeatThrottleMs'
    | 'cancelRequests'
    | 'registry'
    | 'prices'
  > = {},
): () => TestHarness {
  let harness: TestHarness | undefined;
  beforeAll(async () => {
    nock.disableNetConnect();
    nock.enableNetConnect(/127\.0\.0\.1|localhost/);
    harness = await startHarness({ modelBaseUrl: NOCK_MODEL_URL, tools, ...worker });
  });
  afterAll(async () => {
    await harness?.close();
    nock.cleanAll();
    nock.enableNetConnect();
  });
  afterEach(() => nock.cleanAll());
  return () => {
    if (!harness) throw new Error('the harness is only available inside tests');
    return harness;
  };
}
