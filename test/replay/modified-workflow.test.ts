import { readFileSync, readdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { parseNondeterminism } from '../../src/history/nondeterminism';
import { replayHistories } from '../../src/worker/replay-histories';
import { bundleAgentWorkflows } from '../../src/worker/workflow-bundle';
import { workflowIdOf } from '../../src/history/history-file';

// The other half of the replay guarantee: a change to what the workflow schedules, made without
// patched(), makes recorded histories fail to replay; the same change behind patched() does not.
// test/support/modified-conversation.ts holds both versions of the change in one bundle.

const HISTORIES = path.join(__dirname, '..', 'histories');
const files = readdirSync(HISTORIES).filter((file) => file.endsWith('.json'));
const bundlePath = path.join(os.tmpdir(), `durable-agent-modified-workflow-${process.pid}.js`);

interface JsonHistory {
  events: Array<{ workflowExecutionStartedEventAttributes?: { workflowType: { name: string } } }>;
}

function recorded(file: string, workflowType?: string): JsonHistory {
  const history = JSON.parse(readFileSync(path.join(HISTORIES, file), 'utf8')) as JsonHistory;
  if (workflowType)
    history.events[0]!.workflowExecutionStartedEventAttributes!.workflowType.name = workflowType;
  return history;
}

/** The workflow id the history was recorded under: the code reads it (sub-agent ids are built from it). */
const idOf = (file: string) => workflowIdOf(recorded(file) as Parameters<typeof workflowIdOf>[0])!;

beforeAll(async () => {
  try {
    // Core logs every failed workflow task; this test provokes them on purpose.
    Runtime.install({
      logger: new DefaultLogger('ERROR'),
      telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } },
    });
  } catch {
    // Installed already by another test file in this Jest worker.
  }
  const code = await bundleAgentWorkflows({
    workflowsPath: require.resolve('../support/modified-conversation'),
  });
  await writeFile(bundlePath, code);
});

test('the change without patched() breaks replay, and the error names the event', async () => {
  const replay = Worker.runReplayHistory(
    { workflowBundle: { codePath: bundlePath } },
    recorded('tool-fan-out.json'),
    'history-tool-fan-out',
  );
  await expect(replay).rejects.toBeInstanceOf(DeterminismViolationError);
  const error = (await replay.catch((caught: unknown) => caught)) as Error;
  expect(parseNondeterminism(error.message)).toEqual({
    detail: 'Timer machine does not handle this event: HistoryEvent(id: 6, ActivityTaskScheduled)',
    eventId: 6,
    recorded: 'ActivityTaskScheduled',
    expected: 'the workflow code issued a timer command here',
  });
});

test('every recorded history fails to replay against the unpatched change and replays with it behind patched()', async () => {
  const unpatched = await replayHistories(
    files.map((file) => ({ workflowId: idOf(file), history: recorded(file) })),
    { workflowBundlePath: bundlePath },
  );
  expect(unpatched.map((outcome) => outcome.failure?.kind)).toEqual(files.map(() => 'nondeterminism'));
  const patched = await replayHistories(
    files.map((file) => ({
      workflowId: idOf(file),
      history: recorded(file, 'patchedConversation'),
    })),
    { workflowBundlePath: bundlePath },
  );
  expect(patched.map((outcome) => outcome.failure)).toEqual(files.map(() => undefined));
});
