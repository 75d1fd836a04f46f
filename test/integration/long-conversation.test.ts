import { runLongConversation } from '../support/long-conversation';
import { useNockedHarness } from '../support/nocked-harness';
import { bulkTool } from '../support/test-tools';

/**
 * The short form of the soak (test/soak/long-conversation.soak.ts, `npm run soak`: 2,000 turns):
 * the same checks on a conversation long enough to compact and continue as new several times.
 */
const harness = useNockedHarness([bulkTool]);

test(
  'a 200-turn conversation with 4 KB tool outputs completes across continue-as-new runs and compactions, nothing lost',
  () => runLongConversation(harness(), { turns: 200, maxHistoryEvents: 500, minRuns: 6, minSummaries: 11 }),
  10 * 60_000,
);
