import type { WorkflowExecutionStatusName } from '@temporalio/client';
import { z } from 'zod';
import { type AgentEvent, RunFinishedOutcomeSchema } from '../shared/events';

/**
 * The `run_finished` event: the last event of a run, with how it ended.
 *
 * @useDeclaredType
 */
export type RunFinishedEvent = Extract<AgentEvent, { type: 'run_finished' }>;

/**
 * The run a follower waits for, and what is known of it. With `messageId`, the run that took that
 * message, or that it joined by steering; with only `run`, that run; with neither, the first run to
 * finish.
 */
export interface RunSought {
  /** The message whose run is sought. */
  messageId?: string;
  /** The run's number: given, or learnt from its `run_started` or the message's `steered` event. */
  run?: number;
  /**
   * Runs numbered up to here did not take the message: they started before it was sent (`Sent.afterRun`),
   * or their `run_started` did not name it.
   */
  afterRun?: number;
}

/** How following a run ended. */
export type RunEnd =
  /** The run finished. */
  | {
      /** Always `finished` here. */
      how: 'finished';
      /**
       * The run's `run_finished`. When the conversation had ended and no worker could answer for it
       * any more, one made from the workflow's result (`from: 'result'`): its `seq` is the last event
       * seen, `at` the conversation's close, `messageIds` only the message followed.
       */
      event: RunFinishedEvent;
      /** Where the event came from: the conversation's events, or its workflow's result. */
      from: 'events' | 'result';
    }
  /** The conversation ended (or failed, or was terminated) without finishing the run. */
  | {
      /** Always `conversation_ended` here. */
      how: 'conversation_ended';
      /** How the conversation's workflow ended. */
      executionStatus: WorkflowExecutionStatusName;
      /** The failure's message, when it failed. */
      failure?: string;
    }
  /** The caller's signal stopped following first. */
  | {
      /** Always `stopped` here. */
      how: 'stopped';
    };

/** The one test of a run's end: whether `event` ends the run `sought` describes. */
export function endsRun(event: AgentEvent, sought: RunSought): event is RunFinishedEvent {
  if (event.type !== 'run_finished') return false;
  if (sought.messageId !== undefined && event.messageIds.includes(sought.messageId)) return true;
  if (sought.run !== undefined) return event.run === sought.run;
  return sought.messageId === undefined;
}

/** What `event` tells of the run sought: the run that took the message, or one that did not. */
export function learnRun(sought: RunSought, event: AgentEvent): RunSought {
  if (sought.messageId === undefined || sought.run !== undefined) return sought;
  if (event.type === 'steered' && event.messageId === sought.messageId) return { ...sought, run: event.run };
  if (event.type !== 'run_started') return sought;
  if (event.messageIds.includes(sought.messageId)) return { ...sought, run: event.run };
  return { ...sought, afterRun: Math.max(sought.afterRun ?? 0, event.run) };
}

/** What a follower reads of a conversation's result (the workflow's `ConversationResult`): how its last run ended. */
export const EndedConversationSchema = z.object({
  runs: z.number().int(),
  outcome: RunFinishedOutcomeSchema.optional(),
  answer: z.string().optional(),
});
export type EndedConversation = z.infer<typeof EndedConversationSchema>;

/**
 * The run sought's end, made from an ended conversation's result, when its last run is surely that
 * run: the run's number is known and is the last, or the message was sent when only the last run
 * could still take it. Otherwise undefined: the result cannot say.
 */
export function runEndFromResult(
  sought: RunSought,
  result: EndedConversation,
  seen: { lastSeq: number; closedAt: number },
): RunFinishedEvent | undefined {
  if (result.outcome === undefined) return undefined;
  const lastRun =
    sought.run !== undefined
      ? sought.run === result.runs
      : sought.messageId !== undefined && result.runs === (sought.afterRun ?? 0) + 1;
  if (!lastRun) return undefined;
  return {
    type: 'run_finished',
    seq: seen.lastSeq,
    at: seen.closedAt,
    run: result.runs,
    messageIds: sought.messageId !== undefined ? [sought.messageId] : [],
    outcome: result.outcome,
    answer: result.answer ?? '',
  };
}
