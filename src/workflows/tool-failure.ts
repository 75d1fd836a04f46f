import { ActivityFailure, ApplicationFailure, TimeoutFailure, metricMeter } from '@temporalio/workflow';
import { METRIC, recordCount } from '../shared/agent-metrics';
import type { ToolDescriptor } from '../shared/tool-descriptor';
import { PAYLOAD_STORE_UNAVAILABLE, ToolErrorKindSchema } from '../shared/tool-errors';
import { type ToolOutcome, errorOutcome } from '../shared/tool-outcome';

/**
 * A tool activity that failed for good becomes an error result the model can read. `boundId` names
 * the thing (a background process) whose worker the call was sent to.
 */
export function outcomeOfToolFailure(
  descriptor: ToolDescriptor,
  error: unknown,
  boundId?: string,
): ToolOutcome {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof TimeoutFailure && cause.timeoutType === 'SCHEDULE_TO_START' && boundId) {
    return errorOutcome(
      descriptor.name,
      'Unavailable',
      `${boundId} lived in a worker process that is gone (it stopped, restarted or died): nothing can reach it any more, and it stops with that worker (at the latest at its own timeout). Start the command again if it is still needed.`,
    );
  }
  if (cause instanceof TimeoutFailure) return timeoutOutcome(descriptor, cause);
  if (cause instanceof ApplicationFailure && cause.type === PAYLOAD_STORE_UNAVAILABLE) {
    const ran = descriptor.idempotent
      ? ''
      : '; the tool did run, so whatever it did has taken effect, but what it returned is lost';
    return errorOutcome(descriptor.name, 'Unavailable', `${cause.message}${ran}`);
  }
  if (cause instanceof ApplicationFailure) {
    const kind = ToolErrorKindSchema.safeParse(cause.type);
    return errorOutcome(descriptor.name, kind.success ? kind.data : 'ExecutionFailed', cause.message);
  }
  const message = cause instanceof Error ? cause.message : String(cause);
  return errorOutcome(descriptor.name, 'ExecutionFailed', message);
}

function timeoutOutcome(descriptor: ToolDescriptor, failure: TimeoutFailure): ToolOutcome {
  recordCount(metricMeter, METRIC.toolTimeouts, { tool: descriptor.name });
  const seconds = (ms: number) => `${Math.round(ms / 100) / 10}s`;
  const what =
    failure.timeoutType === 'HEARTBEAT'
      ? `stopped reporting progress for ${seconds(descriptor.heartbeatTimeoutMs)} (its worker may have died)`
      : `did not finish within its ${seconds(descriptor.startToCloseTimeoutMs)} timeout`;
  const consequence = descriptor.idempotent
    ? ''
    : '; it has side effects, so it was not run again and whatever it did before stopping may or may not have taken effect';
  return errorOutcome(descriptor.name, 'Timeout', `the tool ${what}${consequence}`);
}
