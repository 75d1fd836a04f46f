import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from '@temporalio/worker';
import { workflowIdOf } from '../../src/history/history-file';

const HISTORIES = path.join(__dirname, '..', 'histories');
const files = readdirSync(HISTORIES).filter((file) => file.endsWith('.json'));

test('there are recorded histories to replay', () => {
  expect(files.length).toBeGreaterThan(0);
});

// Conversations recorded by earlier code must replay against today's workflow code: a change that
// alters what they schedule breaks every running conversation, and belongs behind patched().
test.each(files)('%s replays against the current workflow code', async (file) => {
  // JSON as the exporter writes it: its start event names the workflow id the code ran under.
  const history = JSON.parse(readFileSync(path.join(HISTORIES, file), 'utf8')) as Parameters<
    typeof workflowIdOf
  >[0];
  await Worker.runReplayHistory(
    { workflowBundle: { codePath: process.env.TEST_WORKFLOW_BUNDLE! } },
    history,
    workflowIdOf(history)!,
  );
});
