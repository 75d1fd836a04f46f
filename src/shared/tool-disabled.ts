/**
 * The error a tool's open circuit gives the model, and how a reader of the conversation's events
 * (`status`) finds it again. The time comes first: event previews keep only a result's start.
 */
export function toolDisabledText(refused: {
  tool: string;
  retryAt: string;
  nowMs: number;
  failures: number;
  lastFailure: string;
}): string {
  const seconds = Math.max(1, Math.ceil((Date.parse(refused.retryAt) - refused.nowMs) / 1_000));
  return (
    `${refused.tool} is temporarily disabled on this worker until ${refused.retryAt} (in ${seconds} s) after ` +
    `${refused.failures} failures in a row (last: ${refused.lastFailure}); retry after that, or do without it`
  );
}

const DISABLED = / is temporarily disabled on this worker until (\d{4}-\d\d-\d\dT[\d:.]+Z)/;

/** Until when the text (a result or its preview) says its tool is disabled, if it does. */
export function disabledUntil(text: string): string | undefined {
  return DISABLED.exec(text)?.[1];
}
