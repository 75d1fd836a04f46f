/**
 * The current workflow time in ms. Inside Temporal's workflow sandbox `Date` is deterministic: it
 * returns the time of the workflow task being processed, the same on every replay. This is the one
 * place workflow code reads it.
 */
export function workflowTime(): number {
  return Date.now();
}
