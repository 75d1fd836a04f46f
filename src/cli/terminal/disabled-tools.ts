import type { AgentEvent } from '../../shared/events';
import { outcomeFieldsOf } from '../../shared/tool-outcome';

export interface DisabledTool {
  tool: string;
  /** When its circuit lets a trial call through again (ISO time). */
  until: string;
}

/**
 * Tools a worker has disabled for this conversation's calls (their circuit breaker open), as its
 * latest call of each tool said, while the cool-down lasts. A later result of the tool that is not
 * such a refusal means it works again.
 */
export function disabledTools(events: readonly AgentEvent[], nowMs: number): DisabledTool[] {
  const latest = new Map<string, string | undefined>();
  for (const event of events) {
    if (event.type !== 'tool_execution_end') continue;
    latest.set(event.toolName, outcomeFieldsOf(event).retryAt);
  }
  return [...latest].flatMap(([tool, until]) =>
    until !== undefined && Date.parse(until) > nowMs ? [{ tool, until }] : [],
  );
}
