import { randomUUID } from 'node:crypto';
import { SearchAttributeType, defineSearchAttributeKey } from '@temporalio/common';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { echoTool } from '../support/test-tools';
import { waitFor } from '../support/test-worker';
import { waitForEvent } from '../support/wait-for-event';

const harness = useNockedHarness([echoTool], { searchAttributes: true });
const STATUS = defineSearchAttributeKey('DurableAgentStatus', SearchAttributeType.KEYWORD);
const AGENT = defineSearchAttributeKey('DurableAgentId', SearchAttributeType.KEYWORD);

async function currentDetails(id: string): Promise<string | undefined> {
  const metadata = (await harness().client.workflow.getHandle(id).query('__temporal_workflow_metadata')) as {
    currentDetails?: string;
  };
  return metadata.currentDetails;
}

test('the Web UI sees what a conversation was asked, what it runs and what it waits for; list filters by status', async () => {
  const id = `conv-${randomUUID()}`;
  nockModel([
    {
      toolCalls: [
        { id: 'call_ask', name: 'echo', arguments: { text: 'needs a yes' } },
        { id: 'call_free', name: 'read', arguments: { path: 'notes.md' } },
      ],
    },
    { text: 'Both done.' },
  ]);
  const agent = harness().agent;
  await agent.send(id, 'Echo something\nand read my notes', {
    options: { agentId: 'reviewer', approval: { mode: 'auto', tools: { echo: 'always' } } },
  });
  const handle = harness().client.workflow.getHandle(id);
  await waitForEvent(handle, 'approval_requested');

  const description = await handle.describe();
  expect(await description.staticSummary()).toBe('Echo something and read my notes');
  // The read runs beside the approval wait, so the details name it as running until it finishes
  // (on a loaded machine that can outlast the approval request).
  const expected = 'Run 1: waiting for approval.\n\nWaiting for approval:\n- echo: needs a yes (call_ask)';
  let lastSeen: string | undefined;
  await waitFor(async () => {
    lastSeen = await currentDetails(id);
    return lastSeen === expected ? true : undefined;
  }, 'current details naming the approval').catch((error: unknown) => {
    throw new Error(`${String(error)}; last details seen: ${JSON.stringify(lastSeen)}`);
  });

  // Visibility is eventually consistent: the listing catches up within moments.
  const waiting = await waitFor(async () => {
    const found: string[] = [];
    for await (const execution of harness().client.workflow.list({
      query: `DurableAgentStatus = "awaiting_approval" AND DurableAgentId = "reviewer" AND WorkflowId = "${id}"`,
    })) {
      found.push(execution.workflowId);
    }
    return found.length > 0 ? found : undefined;
  }, 'the listing to show the conversation awaiting approval');
  expect(waiting).toEqual([id]);

  await agent.approve(id, { toolCallId: 'call_ask', decision: 'allow_once', by: 'alice' });
  await waitForEvent(handle, 'run_finished');
  await waitFor(
    async () => ((await currentDetails(id)) === 'Idle: waiting for a message.' ? true : undefined),
    'idle details',
  );
  const attributes = await waitFor(async () => {
    const typed = (await handle.describe()).typedSearchAttributes;
    return typed.get(STATUS) === 'idle' ? typed : undefined;
  }, 'the idle status attribute');
  expect(attributes.get(AGENT)).toBe('reviewer');

  // Every activity carries a summary the UI shows instead of its type.
  const summaries: string[] = [];
  const history = await handle.fetchHistory();
  const converter = harness().client.options.loadedDataConverter;
  for (const event of history.events ?? []) {
    const summary = event.userMetadata?.summary;
    // A short read-only tool runs as a local activity: its summary is on its marker (as is the
    // admission check's).
    const localActivity = event.markerRecordedEventAttributes?.markerName === 'core_local_activity';
    if ((event.activityTaskScheduledEventAttributes || localActivity) && summary) {
      const [payload] = await converter.payloadCodecs.reduceRight(
        async (payloads, codec) => codec.decode(await payloads),
        Promise.resolve([summary]),
      );
      const text = converter.payloadConverter.fromPayload<string>(payload!);
      // On a loaded machine the local read can outlast its attempt and run again as an activity,
      // under the same summary: it is one step in the UI's eyes.
      if (summaries.at(-1) !== text) summaries.push(text);
    }
  }
  expect(summaries).toEqual([
    'admission: the worker checks the options against its floors',
    "list the worker's tools",
    'system prompt: the worker writes the default one',
    'model (worker default): run 1, turn 1',
    'read notes.md',
    'echo: needs a yes',
    'model (worker default): run 1, turn 2',
  ]);
});
