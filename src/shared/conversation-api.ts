import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import { z } from 'zod';
import {
  type ClientToolReceipt,
  type ClientToolResult,
  ClientToolsSchema,
  type PendingClientToolCall,
} from './client-tools';
import { ImageContentSchema } from './content';

/** Images one user message may carry. */
export const MAX_MESSAGE_IMAGES = 8;
import type { ApprovalDecision, ApprovalDecisionKind, PendingApproval, StandingDecision } from './approvals';
import type { BudgetStatus } from './budget';
import type { ConversationOptionsInput } from './conversation-options';
import type { CompactionReceipt } from './compaction';
import type { AgentEvent, RunFinishedOutcome } from './events';
import type { Message } from './messages';
import type { RapConversationMessage, UserChoiceAnswer } from './rap';

/** A user message as clients send it; unknown keys are refused. */
export const UserMessageInputSchema = z.strictObject({
  /** The message's text. */
  text: z.string().min(1, 'message text is empty'),
  /** The client's id for it, unique in the conversation: how a sender finds the run that answers it. */
  messageId: z.string().min(1),
  /** Who sent it, as the caller vouches; decides whether `ownerOnly` tools may run (see `owners`). */
  sender: z.string().trim().min(1, 'sender is empty').optional(),
  /** Images that come with the text (a screenshot pasted in an editor), shown to the model with it. */
  images: z.array(ImageContentSchema).max(MAX_MESSAGE_IMAGES).optional(),
  /**
   * Tools the sender carries out itself, offered to the model for the run that takes this message
   * (see client-tools.ts); a steering message's are not taken.
   */
  clientTools: ClientToolsSchema.optional(),
});
export type UserMessageInput = z.infer<typeof UserMessageInputSchema>;

/** What a client starts a conversation with: the workflow's input (it adds what continue-as-new carries). */
export interface ConversationStartInput {
  options?: ConversationOptionsInput;
  /** A first message, queued before any signal: how a scheduled conversation starts with its prompt. */
  initialMessage?: UserMessageInput;
}

/** Starts a run, or queues as a follow-up while one is running. */
export const userMessageSignal = defineSignal<[UserMessageInput]>('userMessage');
/** Ends the conversation once the current run and queued messages are done. */
export const endSignal = defineSignal<[{ reason?: string }?]>('end');

/**
 * Steering: the tools of the current turn are cancelled (each may return what it has), then the
 * message joins the transcript and the run goes on. During a model call it waits for the call to
 * finish. With no run in progress it starts one, like a user message.
 */
export const steerSignal = defineSignal<[UserMessageInput]>('steer');
/** The `steer` update's answer. */
export interface SteerReceipt {
  /** The steering message's id. */
  messageId: string;
  /** True when a run was in progress and is being steered; false when the message started a run. */
  interrupting: boolean;
  /** True when a message with this id had been taken already: this one was dropped (`interrupting` is then false). */
  duplicate?: boolean;
}
/** Returns once the steering message is accepted; the validator refuses an ended conversation. */
export const steerUpdate = defineUpdate<SteerReceipt, [UserMessageInput]>('steer');

export const AbortInputSchema = z.strictObject({
  /** Why, for the record. */
  reason: z.string().optional(),
  /** Who aborts. */
  by: z.string().optional(),
});
/**
 * What the `abort` signal or update takes: an optional reason, and who asked.
 *
 * @useDeclaredType
 */
export type AbortInput = z.infer<typeof AbortInputSchema>;
/** Cancels the model call and tools of the current run and ends it; the conversation stays usable. */
export const abortSignal = defineSignal<[AbortInput?]>('abort');
/** The `abort` update's answer. */
export interface AbortReceipt {
  /** The run being aborted. */
  run: number;
}
/** Returns once the abort is accepted; the validator refuses when no run is in progress. */
export const abortUpdate = defineUpdate<AbortReceipt, [AbortInput]>('abort');

/** Decides a pending approval. A signal with a decision the update would refuse is recorded as an error event. */
export const approveSignal = defineSignal<[ApprovalDecision]>('approve');
/** The `approve` update's answer: the decision as recorded. */
export interface ApprovalReceipt {
  /** The call decided on. */
  toolCallId: string;
  /** The tool's name. */
  toolName: string;
  /** The decision recorded. */
  decision: ApprovalDecisionKind;
  /** Under an approval policy whose quorum is not met yet: how far it is ("1 of 2 of leads have allowed"). */
  waitingFor?: string;
}
/**
 * The validator refuses an unknown or already decided `toolCallId` and an approver not in the
 * conversation's `approvers`; a refused decision never touches state.
 */
export const approveUpdate = defineUpdate<ApprovalReceipt, [ApprovalDecision]>('approve');
/**
 * Summarises the oldest turns now (at the next turn boundary when a run is in progress) whatever
 * the budget; returns once done. `compacted: false` when there was nothing before the newest turn.
 */
export const compactUpdate = defineUpdate<CompactionReceipt, []>('compact');

export const ApprovalModeInputSchema = z.strictObject({
  /** `default`: each tool's own setting; `ask`: every tool asks; `auto`: nothing asks but tools set to always ask. */
  mode: z.enum(['default', 'ask', 'auto']),
  /**
   * Who changes it. A change that asks for less (ask -> default -> auto) is a decision like an
   * approval: it must name one of the conversation's `approvers` when it has some, and where the
   * worker names approver keys, carry that approver's signature (see signed-decisions.ts).
   */
  by: z.string().trim().min(1).optional(),
  /** `by`'s Ed25519 signature (base64) over the change, where the worker names approver keys. */
  signature: z.string().trim().min(1).max(200).optional(),
  /** When the signature stops counting, in ms since the epoch. */
  signatureExpiresAt: z.number().int().positive().optional(),
});
/**
 * What the `approvalMode` update takes: the new mode, who sets it, and a signature when it asks
 * for less.
 *
 * @useDeclaredType
 */
export type ApprovalModeInput = z.infer<typeof ApprovalModeInputSchema>;
/**
 * Sets the conversation's approval mode for the calls asked about from now on (pending ones wait
 * as they are); carried by continue-as-new. The worker's approval floor still holds. The validator
 * refuses an unknown mode and an ended conversation.
 */
export const setApprovalModeUpdate = defineUpdate<{ mode: ApprovalModeInput['mode'] }, [ApprovalModeInput]>(
  'setApprovalMode',
);

/**
 * A client tool's result from its sender, for a call that waits for it. The validator refuses a call
 * that waits for nothing (unknown, answered, or ended by a steer or abort), so a result is taken once.
 */
export const clientToolResultUpdate = defineUpdate<ClientToolReceipt, [ClientToolResult]>('clientToolResult');
/** Client tool calls waiting for their sender's result, oldest first, with their whole arguments. */
export const pendingClientToolCallsQuery = defineQuery<PendingClientToolCall[]>('pendingClientToolCalls');

/** Tool calls waiting for a decision, oldest first. */
export const pendingApprovalsQuery = defineQuery<PendingApproval[]>('pendingApprovals');

/** `idle`: no run in progress; `running`: a run is in progress; `ended`: the conversation takes nothing more. */
export type ConversationStatus = 'idle' | 'running' | 'ended';

/** Where a forked conversation came from: the conversation, the execution and the run it was forked at. */
export interface ForkedFrom {
  /** The original conversation. */
  conversationId: string;
  /** The Temporal run id of the execution in which run `atRun` ended; absent when not known. */
  runId?: string;
  /** The run whose end the fork starts from. */
  atRun: number;
}

/**
 * The carried state a fork starts with: the original's transcript at the end of a run and that
 * run's number; the rest starts afresh. A worker checks it against the original's history.
 */
export interface ForkCarried {
  transcript: { messages: Message[]; generation: 0; sentToModel: 0 };
  events: { events: []; lastSeq: 0 };
  standingApprovals: Record<string, never>;
  queue: [];
  runCount: number;
  endRequested: false;
  continuations: 0;
  forkedFrom: ForkedFrom;
}

/** The `status` query's answer: the state without the transcript and events, cheap to ask often. */
export interface ConversationStatusSummary {
  /** Idle, running, or ended. */
  status: ConversationStatus;
  /** Runs started so far. */
  runCount: number;
  /** Messages waiting for the run in progress to end. */
  queuedMessages: number;
  /** Messages in the transcript. */
  transcriptLength: number;
  /** Sequence number of the newest event, 0 before any. */
  lastSeq: number;
  /** Approvals waiting for a decision. */
  pendingApprovals: number;
  /** The transcript's generation (it changes when compaction replaces old turns), for `transcriptPage`; 0 when absent. */
  transcriptGeneration?: number;
  /** Whose conversation this is (its `agentId` option, `default` when it has none); absent from older workers. */
  agentId?: string;
  /**
   * The conversation at the top of its tree of sub-agents (itself when it is no sub-agent), as
   * Temporal's parent links vouch for it; absent from older workers.
   */
  root?: string;
  /** Set when the conversation was forked from another one (`fork`). */
  forkedFrom?: ForkedFrom;
  /** The approval mode now (see `setApprovalMode`); absent from older workers. */
  approvalMode?: ApprovalModeInput['mode'];
  /** Tokens and tool calls spent (by the conversation and its latest run) and the budget's limits; absent from older workers. */
  budget?: BudgetStatus;
  /** How the latest finished run ended, while its event is among those kept; absent before any, and from older workers. */
  lastRun?: LastRunSummary;
}
export const statusQuery = defineQuery<ConversationStatusSummary>('status');

/**
 * What a conversation remembers of a message it took, by the message's id: a message delivered
 * again under that id is dropped, so a sender may always retry.
 */
export interface MessageReceipt {
  /** `messageFingerprint` of the message taken: a retry matches it; another message under the same id does not. */
  fingerprint: string;
  /** Events up to here came before the message. */
  afterSeq: number;
  /** Runs numbered up to here did not take the message. */
  afterRun: number;
}
/** The receipt of the message taken under this id, or null when none was (or it is too old to be remembered). */
export const messageReceiptQuery = defineQuery<MessageReceipt | null, [string]>('messageReceipt');

/** How a run ended, as `status` says it. */
export interface LastRunSummary {
  /** The run's number. */
  run: number;
  /** How it ended. */
  outcome: RunFinishedOutcome;
  /** When it was `refused`: why, in the provider's words (bounded), when it said. */
  refusal?: string;
}

/** The summary plus everything kept: the whole transcript and the latest events. */
export interface ConversationState extends ConversationStatusSummary {
  /** The whole transcript (of the current generation). */
  transcript: Message[];
  /** The events kept in state (the latest, bounded). */
  events: AgentEvent[];
  /** Approvals pending, and the decisions that stand. */
  approvals: {
    /** Tool calls waiting for a decision, oldest first. */
    pending: PendingApproval[];
    /** Decisions that hold for a tool for the rest of the conversation (allow_always, reject_always). */
    standing: Record<string, StandingDecision>;
  };
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

// RAP: messages from tool servers, their subscriptions, views and choices.

/** Delivers a checked callback message; a subscription event wakes an idle conversation. */
export const rapMessageSignal = defineSignal<[RapConversationMessage]>('rapMessage');

/** The conversation's active subscriptions (tool call ids): what the callback server accepts events for. */
export const rapSubscriptionsQuery = defineQuery<string[]>('rapSubscriptions');

/** The latest content of each view a tool pushed (`view_update`), by view type. */
export const rapViewsQuery = defineQuery<Record<string, Record<string, unknown>>>('rapViews');

/** Answers a tool's `user_choice`: the selection is POSTed to its `response_url`. Returns the index sent. */
export const answerUserChoiceUpdate = defineUpdate<{ selected: number }, [UserChoiceAnswer]>(
  'answerUserChoice',
);
