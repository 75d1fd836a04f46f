import type { AgentClient, RunToFollow } from '../client/agent-client';
import { type RunEnd, type RunSought, learnRun } from '../client/run-end';
import type { AgentEvent } from '../shared/events';
import type { ApprovalAsker } from './approval-elicitation';
import { line, tail } from './quoted-text';

/** How much of the text streaming so far a progress message shows, at most. */
const TEXT_TAIL_CHARS = 160;

/** What following a run does besides waiting for its end. */
export interface RunWatch {
  /** Sends one progress notification; absent when the client asked for none. */
  progress?: (message: string) => Promise<void>;
  /** Asks the client's person about the run's approvals; absent when the client cannot be asked. */
  asker?: ApprovalAsker;
  /** Throws once the caller may not go on (a token revoked or expired). */
  recheck: () => void;
  /** Ends following (the request went away, or its wait is over): it then returns `stopped`. */
  signal: AbortSignal;
}

/**
 * Follows the run that takes a message to its end, telling its progress (the model's text as it
 * streams, tool calls and their progress, approvals) and asking its approvals as it goes.
 */
export async function followWithProgress(
  agent: AgentClient,
  target: RunToFollow,
  watch: RunWatch,
): Promise<RunEnd> {
  const following = agent.followRun(target, { signal: watch.signal });
  const describe = progressDescriber();
  let sought: RunSought = target;
  try {
    for (;;) {
      const next = await following.next();
      if (next.done) return next.value;
      const event = next.value;
      watch.recheck();
      const learnt = learnRun(sought, event);
      const runStarted = sought.run === undefined && learnt.run !== undefined;
      sought = learnt;
      const message = describe(event);
      if (message !== undefined && watch.progress) await watch.progress(message);
      if (!watch.asker || sought.run === undefined || event.run !== sought.run) continue;
      // Approvals asked before the events followed began are asked when the run is first seen.
      if (runStarted || event.type === 'approval_requested') {
        await watch.asker.askPending(sought.run);
      } else if (event.type === 'approval_decided') await watch.asker.withdraw(event.toolCallId);
    }
  } finally {
    await following.return({ how: 'stopped' });
  }
}

/** Turns events into progress messages, keeping the text each model call has streamed so far. */
export function progressDescriber(): (event: AgentEvent) => string | undefined {
  const texts = new Map<string, string>();
  return (event) => {
    switch (event.type) {
      case 'run_started':
        return `run ${event.run} started`;
      case 'model_text': {
        const before = texts.get(event.call) ?? '';
        // A later piece may start before the end of what was seen (a retried attempt starts again).
        const text = before.slice(0, event.offset) + event.text;
        texts.clear();
        texts.set(event.call, text);
        return `writing: ${tail(text, TEXT_TAIL_CHARS)}`;
      }
      case 'model_retry':
        return `the model call failed (${line(event.error, 120)}); trying again (attempt ${event.attempt})`;
      case 'tool_execution_start':
        return `running ${line(event.toolName, 80)}`;
      case 'tool_execution_update': {
        const detail =
          event.text ?? (event.details !== undefined ? JSON.stringify(event.details) : undefined);
        return detail === undefined
          ? undefined
          : `${line(event.toolName, 80)}: ${line(detail, TEXT_TAIL_CHARS)}`;
      }
      case 'tool_execution_end':
        return `${line(event.toolName, 80)} ${event.aborted ? 'interrupted' : event.isError ? 'failed' : 'done'}`;
      case 'approval_requested':
        return `waiting for approval to run ${line(event.toolName, 80)} (tool call ${line(event.toolCallId, 100)})`;
      case 'approval_decided':
        return `${line(event.toolName, 80)} ${event.decision.replace('_', ' ')} by ${line(event.by, 100)}`;
      case 'run_finished':
        return `run ${event.run} finished (${event.outcome})`;
      default:
        return undefined;
    }
  };
}
