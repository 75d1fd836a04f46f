/**
 * How long the server waits for a worker to finish a conversation's workflow task before it gives
 * the task to another worker: what a worker killed in the middle of one costs the conversation.
 * Temporal's default is 10 s. A task that legitimately takes longer (replaying an uncached history)
 * would time out on every attempt, so conversations also bound their history (below) to keep
 * replay well inside it.
 */
export const WORKFLOW_TASK_TIMEOUT_MS = 4_000;

/**
 * Events after which a conversation's run continues as new when its options set no
 * `maxHistoryEvents`. Replay costs about 0.7 ms an event on a two-core machine, so an uncached
 * run of this length replays in about a quarter of WORKFLOW_TASK_TIMEOUT_MS.
 */
export const DEFAULT_MAX_HISTORY_EVENTS = 1_500;
