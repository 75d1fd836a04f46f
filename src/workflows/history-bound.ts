import { workflowInfo } from '@temporalio/workflow';

/**
 * Whether the running execution should hand over to a new run: Temporal suggests it, or its history
 * has `maxHistoryEvents` events (no bound of its own when undefined).
 */
export function runHistoryIsLong(maxHistoryEvents: number | undefined): boolean {
  const info = workflowInfo();
  return (
    info.continueAsNewSuggested || (maxHistoryEvents !== undefined && info.historyLength >= maxHistoryEvents)
  );
}
