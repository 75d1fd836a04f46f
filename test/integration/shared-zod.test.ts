import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
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

test('the workflow bundle loads zod in its preload step, before any workflow, so the worker thread shares it', async () => {
  const bundle = await readFile(process.env.TEST_WORKFLOW_BUNDLE!, 'utf8');
  const preload = /exports\.preloadModules = function preloadModules\(\) \{([\s\S]*?)\n\}/.exec(bundle)?.[1];
  const moduleId = /"(\.\/[^"]*shared-zod\.[jt]s)"\)/.exec(preload ?? '')?.[1];
  expect(moduleId).toBeDefined();
  const fromModule = bundle.slice(bundle.indexOf(`/***/ "${moduleId}"`));
  const moduleBody = fromModule.slice(0, fromModule.indexOf('/***/ }'));
  expect(moduleBody).toContain('"./node_modules/zod/index.cjs")');
});
