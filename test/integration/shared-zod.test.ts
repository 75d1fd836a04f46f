import { randomUUID } from 'node:crypto';
import { WorkflowFailedError } from '@temporalio/client';
import { userMessageSignal } from '../../src/shared/conversation-api';
import type { conversation } from '../../src/workflows/conversation';
import { ask } from '../support/ask';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { echoTool } from '../support/test-tools';
import { waitForEvent } from '../support/wait-for-event';

// The workflow bundle preloads zod (src/workflows/shared-zod.ts): every conversation a worker thread
// has cached validates with one shared, frozen copy of it. These conversations share one worker.
const harness = useNockedHarness([echoTool]);

test('conversations sharing one zod each validate their own input, and refusals leave the others working', async () => {
  nockModel([{ text: 'First answer.' }, { text: 'Second answer.' }]);
  const first = `conv-${randomUUID()}`;
  expect((await ask(harness().agent, first, 'Hello')).finished).toMatchObject({ answer: 'First answer.' });

  const refused = await harness().client.workflow.start<typeof conversation>('conversation', {
    workflowId: `conv-${randomUUID()}`,
    taskQueue: harness().taskQueue,
    args: [{ options: { maxToolIterations: 0 } }],
  });
  const failure = await refused.result().catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(WorkflowFailedError);
  expect((failure as WorkflowFailedError).cause?.message).toMatch(
    /^invalid conversation options: [\s\S]*maxToolIterations[\s\S]*>=1/,
  );

  const handle = harness().client.workflow.getHandle(first);
  await handle.signal(userMessageSignal, { text: '', messageId: 'm-empty' });
  expect(await waitForEvent(handle, 'error')).toMatchObject({
    message: expect.stringMatching(/^userMessage ignored: [\s\S]*message text is empty/),
  });
  expect((await ask(harness().agent, first, 'Still there?')).finished).toMatchObject({
    answer: 'Second answer.',
  });
});
