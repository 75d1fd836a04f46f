import { z } from 'zod';
import { ApprovalDecisionKindSchema, RiskLevelSchema } from './approvals';
import { BUDGET_PAUSE_KINDS, type BudgetPauseKind } from './budget';
import { ToolOutcomeFieldsSchema } from './tool-outcome';

const base = { seq: z.number().int(), at: z.number(), run: z.number().int() };

/**
 * How a run ended: the model answered, ran out of tool iterations, an activity failed for good, it
 * was aborted, or it reached its budget and a person (or the approval timeout) stopped it.
 */
export const RunFinishedOutcomeSchema = z.enum([
  'answered',
  'max_tool_iterations',
  'error',
  'aborted',
  'budget_exhausted',
]);
export type RunFinishedOutcome = z.infer<typeof RunFinishedOutcomeSchema>;

/** The event log of a conversation, snake_case as in pi-mono's agent loop. `at` is workflow time in ms. */
export const AgentEventSchema = z.discriminatedUnion('type', [
  z.object({ ...base, type: z.literal('run_started'), messageIds: z.array(z.string()) }),
  z.object({
    ...base,
    type: z.literal('model_response'),
    iteration: z.number().int(),
    /** The start of the model's text (EVENT_TEXT_PREVIEW_CHARS); the transcript has all of it. */
    text: z.string(),
    toolCalls: z.array(z.object({ id: z.string(), name: z.string() })),
  }),
  z.object({
    ...base,
    type: z.literal('tool_execution_start'),
    toolCallId: z.string(),
    toolName: z.string(),
    /** The arguments' first EVENT_ARGUMENTS_CHARS characters; the transcript holds them whole. */
    args: z.string(),
  }),
  /**
   * Progress of a running tool. Not kept by the workflow (that would cost history for every update):
   * watchers make it from the heartbeat details of pending activities, with the `seq` of the last
   * workflow event before it.
   */
  z.object({
    ...base,
    type: z.literal('tool_execution_update'),
    toolCallId: z.string(),
    toolName: z.string(),
    text: z.string().optional(),
    details: z.unknown().optional(),
  }),
  /**
   * Text of a model call as it streams. Like `tool_execution_update`, made by watchers (from the
   * worker in their own process as it arrives, otherwise from heartbeat details) and never kept.
   * `text` is the call's text from `offset` on; an offset past what a watcher has seen of `call`
   * means the characters between were not seen. A new `call` (another turn, or a retried attempt)
   * starts its text again.
   */
  z.object({
    ...base,
    type: z.literal('model_text'),
    call: z.string(),
    offset: z.number().int().min(0),
    text: z.string(),
  }),
  z.object({
    ...base,
    type: z.literal('tool_execution_end'),
    toolCallId: z.string(),
    toolName: z.string(),
    isError: z.boolean(),
    /** Interrupted by steer or abort. */
    aborted: z.boolean().optional(),
    /**
     * The outcome's status, error kind, blocker and circuit retry time (see tool-outcome.ts); absent
     * in events recorded before they existed: read them with `outcomeFieldsOf`.
     */
    ...ToolOutcomeFieldsSchema.pick({
      status: true,
      errorKind: true,
      blockedBy: true,
      retryAt: true,
    }).partial().shape,
    /** First part of the result text, for display. */
    preview: z.string(),
  }),
  z.object({
    ...base,
    type: z.literal('approval_requested'),
    toolCallId: z.string(),
    toolName: z.string(),
    /** The arguments' first EVENT_ARGUMENTS_CHARS characters; the pending approval holds them whole. */
    args: z.string(),
    /** SHA-256 (hex) of the whole arguments; absent in events of older workers. */
    argsSha256: z.string().optional(),
    risk: RiskLevelSchema,
    /** Under an approval policy: whom it asks, how many must allow, and its deadlines. */
    asks: z.string().optional(),
  }),
  z.object({
    ...base,
    type: z.literal('approval_decided'),
    toolCallId: z.string(),
    toolName: z.string(),
    decision: ApprovalDecisionKindSchema,
    /** The approver (of the earlier always-decision, when one settled the request); `timeout` when it timed out. */
    by: z.string(),
    reason: z.string().optional(),
  }),
  /** Under an approval policy: one approver's decision counted towards the request's quorum. */
  z.object({
    ...base,
    type: z.literal('approval_counted'),
    toolCallId: z.string(),
    toolName: z.string(),
    decision: ApprovalDecisionKindSchema,
    by: z.string(),
    /** How far the quorum has come after it: "1 of 2 of leads have allowed". */
    progress: z.string(),
  }),
  /** Under an approval policy: nobody's quorum allowed in time, so the escalation group may decide too. */
  z.object({
    ...base,
    type: z.literal('approval_escalated'),
    toolCallId: z.string(),
    toolName: z.string(),
    /** The escalation group, its members and how many of them must allow. */
    to: z.string(),
    members: z.array(z.string()),
    quorum: z.number().int(),
  }),
  z.object({
    ...base,
    type: z.literal('steered'),
    messageId: z.string(),
    text: z.string(),
    /** Tool calls interrupted by this steer. */
    interrupted: z.array(z.string()),
  }),
  z.object({
    ...base,
    type: z.literal('aborted'),
    reason: z.string().optional(),
    by: z.string().optional(),
    /** Tool calls interrupted by this abort. */
    interrupted: z.array(z.string()),
  }),
  /** A `sessions_spawn` call started a sub-agent: a child conversation, watchable by its id. */
  z.object({
    ...base,
    type: z.literal('subagent_started'),
    toolCallId: z.string(),
    conversationId: z.string(),
    task: z.string(),
  }),
  /** The oldest messages were replaced by a summary; the transcript starts a new generation. */
  z.object({
    ...base,
    type: z.literal('compacted'),
    removedMessages: z.number().int(),
    keptMessages: z.number().int(),
    tokensBefore: z.number().int(),
    tokensAfter: z.number().int(),
  }),
  z.object({
    ...base,
    type: z.literal('run_finished'),
    messageIds: z.array(z.string()),
    outcome: RunFinishedOutcomeSchema,
    answer: z.string(),
    /** Tokens the endpoint reported and tool calls run in this run; absent in events of older workers. */
    usage: z.object({ tokens: z.number().int(), toolCalls: z.number().int() }).optional(),
  }),
  /**
   * The run reached its budget and was stopped there instead of raising it: by whom (`timeout` when
   * nobody decided in time), how much of which part was used of how much. `run_finished` follows.
   */
  z.object({
    ...base,
    type: z.literal('budget_exhausted'),
    budget: z.enum(BUDGET_PAUSE_KINDS as [BudgetPauseKind, ...BudgetPauseKind[]]),
    /** Tokens, tool calls, or ms since the conversation's start. */
    used: z.number(),
    limit: z.number(),
    by: z.string(),
    reason: z.string().optional(),
  }),
  /** A RAP subscription's event entered the transcript as a `receive_event__injected` call. */
  z.object({
    ...base,
    type: z.literal('subscription_event'),
    /** The call that started the subscription. */
    toolCallId: z.string(),
    toolName: z.string(),
    text: z.string(),
    /** The subscription's last event. */
    final: z.boolean(),
  }),
  /** A RAP tool asks the user to choose; `answerUserChoice` (or `choose` on the command line) answers. */
  z.object({
    ...base,
    type: z.literal('user_choice_requested'),
    toolCallId: z.string(),
    toolName: z.string(),
    prompt: z.string(),
    choices: z.array(z.string()),
    default: z.number().int(),
  }),
  z.object({
    ...base,
    type: z.literal('user_choice_answered'),
    toolCallId: z.string(),
    selected: z.number().int(),
    by: z.string().optional(),
  }),
  /** A RAP tool needs the user to authorise it at `authUrl`; the call stays pending until it answers. */
  z.object({
    ...base,
    type: z.literal('oauth_requested'),
    toolCallId: z.string(),
    toolName: z.string(),
    authUrl: z.string(),
  }),
  /** A RAP tool pushed new content for a view; the `rapViews` query has it. */
  z.object({ ...base, type: z.literal('view_updated'), toolCallId: z.string(), viewType: z.string() }),
  z.object({ ...base, type: z.literal('error'), message: z.string() }),
  /** Something the user should fix that did not stop anything, e.g. a tool policy entry naming no tool. */
  z.object({ ...base, type: z.literal('warning'), message: z.string() }),
]);
export type AgentEvent = z.infer<typeof AgentEventSchema>;
export type AgentEventType = AgentEvent['type'];

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event before the log stamps it with its sequence number, time and run. */
export type NewAgentEvent = DistributiveOmit<AgentEvent, 'seq' | 'at' | 'run'>;
