import { runLongConversation } from '../support/long-conversation';
import { useNockedHarness } from '../support/nocked-harness';
import { bulkTool } from '../support/test-tools';

/**
 * The soak (`npm run soak`, not part of `npm test`): 2,000 turns with 4 KB tool outputs, across many
 * continue-as-new runs and compactions, nothing lost. test/integration/long-conversation.test.ts
 * runs the same checks on a short conversation in every `npm test`.
 */
const harness = useNockedHarness([bulkTool]);

test(
  'a 2000-turn conversation with 4 KB tool outputs completes across continue-as-new runs, nothing lost',
  () =>
    runLongConversation(harness(), { turns: 2_000, maxHistoryEvents: 2_000, minRuns: 6, minSummaries: 11 }),
  45 * 60_000,
);
