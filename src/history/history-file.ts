import { historyFromJSON, historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { temporal } from '@temporalio/proto';

type History = temporal.api.history.v1.IHistory;

/**
 * The history file `export` writes and `replay` reads: one execution's history as the JSON object
 * `temporal workflow show --output json` prints and `Worker.runReplayHistory` accepts, or several
 * of them (a conversation's executions across continue-as-new, oldest first) as a JSON array.
 */
export function historyFileText(histories: History[], { array }: { array: boolean }): string {
  const documents = histories.map((history) => JSON.parse(historyToJSON(history)) as unknown);
  return `${JSON.stringify(array ? documents : documents[0], null, 1)}\n`;
}

/** Histories from a history file's text; throws saying why when it is not one. */
export function parseHistoryFile(text: string): History[] {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new Error(`not a history file: ${(error as Error).message}`);
  }
  const documents = Array.isArray(document) ? document : [document];
  return documents.map((entry, index) => {
    const events = (entry as { events?: unknown } | null)?.events;
    if (!Array.isArray(events) || events.length === 0) {
      throw new Error(
        `not a history file: ${documents.length > 1 ? `entry ${index} has` : 'it has'} no events`,
      );
    }
    return historyFromJSON(entry);
  });
}

/** The workflow id a history's start event records (replay needs it: the conversation id is the workflow id). */
export function workflowIdOf(history: History): string | undefined {
  return history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowId || undefined;
}
