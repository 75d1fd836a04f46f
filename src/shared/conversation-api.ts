import { defineQuery, defineSignal } from '@temporalio/workflow';
import { z } from 'zod';
import type { AgentEvent } from './events';
import type { Message } from './messages';

export const UserMessageInputSchema = z.object({
  text: z.string().min(1, 'message text is empty'),
  messageId: z.string().min(1),
});
export type UserMessageInput = z.infer<typeof UserMessageInputSchema>;

/** Starts a run, or queues as a follow-up while one is running. */
export const userMessageSignal = defineSignal<[UserMessageInput]>('userMessage');
/** Ends the conversation once the current run and queued messages are done. */
export const endSignal = defineSignal<[{ reason?: string }?]>('end');

export type ConversationStatus = 'idle' | 'running' | 'ended';

/** The state without the transcript and events: cheap to ask often. */
export interface ConversationStatusSummary {
  status: ConversationStatus;
  runCount: number;
  queuedMessages: number;
  transcriptLength: number;
  /** Sequence number of the newest event, 0 before any. */
  lastSeq: number;
}
export const statusQuery = defineQuery<ConversationStatusSummary>('status');

/** The summary plus everything kept: the whole transcript and the latest events. */
export interface ConversationState extends ConversationStatusSummary {
  transcript: Message[];
  /** The events kept in state (the latest, bounded). */
  events: AgentEvent[];
}
export const stateQuery = defineQuery<ConversationState>('state');
/** Events with a sequence number above `afterSeq`. */
export const eventsQuery = defineQuery<AgentEvent[], [number]>('events');

export interface TranscriptPage {
  messages: Message[];
  /** Index of the first message not returned, or null when `to` was reached. */
  next: number | null;
}
/** Messages [from, to) of the current transcript generation, as many as fit in one page. */
export const transcriptPageQuery = defineQuery<
  TranscriptPage,
  [{ generation: number; from: number; to: number }]
>('transcriptPage');
