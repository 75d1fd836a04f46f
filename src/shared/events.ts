import { z } from 'zod';
import { ApprovalDecisionKindSchema, RiskLevelSchema } from './approvals';
import { BUDGET_PAUSE_KINDS, type BudgetPauseKind } from './budget';
import { ToolOutcomeFieldsSchema } from './tool-outcome';

const base = {
  /** The event's place in the conversation's log: 1 for the first, one more for each. */
  seq: z.number().int(),
  /** When it happened: workflow time, in ms since the epoch. */
  at: z.number(),
  /** The run it belongs to (1 for the conversation's first); between runs, the latest run, 0 before any. */
  run: z.number().int(),
};
/** The fields of an event about one tool call. */
const call = {
  /** The tool call's id, as the model gave it. */
  toolCallId: z.string(),
  /** The tool's name. */
  toolName: z.string(),
};
/** The `type` field that tells the events apart. */
function eventType<T extends string>(type: T) {
  return {
    /** What kind of event it is; the other fields follow from it. */
    type: z.literal(type),
  };
}

/**
 * How a run ended: the model answered, its provider refused to answer, it ran out of tool
 * iterations, an activity failed for good, it was aborted, or it reached its budget and a person (or
 * the approval timeout) stopped it.
 */
export const RunFinishedOutcomeSchema = z.enum([
  'answered',
  'refused',
  'max_tool_iterations',
  'error',
  'aborted',
  'budget_exhausted',
]);
/**
 * How a run ended: answered, or why not.
 *
 * @useDeclaredType
 */
export type RunFinishedOutcome = z.infer<typeof RunFinishedOutcomeSchema>;

/** The event log of a conversation, snake_case as in pi-mono's agent loop. `at` is workflow time in ms. */
export const AgentEventSchema = z.discriminatedUnion('type', [
  z.object({
    ...base,
    ...eventType('run_started'),
    /** The messages the run answers. */
    messageIds: z.array(z.string()),
  }),
  z.object({
    ...base,
    ...eventType('model_response'),
    /** The turn of the run this model call was made in: 1 for the first. */
    iteration: z.number().int(),
    /** The start of the model's text (EVENT_TEXT_PREVIEW_CHARS); the transcript has all of it. */
    text: z.string(),
    /** The tool calls the model asked for. */
    toolCalls: z.array(
      z.object({
        /** The call's id. */
        id: z.string(),
        /** The tool's name. */
        name: z.string(),
      }),
    ),
  }),
  z.object({
    ...base,
    ...eventType('tool_execution_start'),
    ...call,
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
    ...eventType('tool_execution_update'),
    ...call,
    /** The tool's latest progress text. */
    text: z.string().optional(),
    /** The tool's latest progress details, for user interfaces. */
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
    ...eventType('model_text'),
    /** Which model call (and attempt) the text is of. */
    call: z.string(),
    /** Where `text` starts in the call's text, in characters. */
    offset: z.number().int().min(0),
    /** The call's text from `offset` on. */
    text: z.string(),
  }),
  /**
   * A model call whose last attempt failed for a passing reason (429, 5xx, a timeout, a lost
   * connection, a dead worker) and that is tried again. Like `model_text`, made by watchers (from
   * the pending model activity) and never kept; one per failed attempt a watcher sees.
   */
  z.object({
    ...base,
    ...eventType('model_retry'),
    /** The attempt that comes next: 2 after the first failure. */
    attempt: z.number().int().min(2),
    /** Why the last attempt failed. */
    error: z.string(),
    /** When the run gives up on the call and ends with an error, in ms since the epoch. */
    givesUpAt: z.number().optional(),
  }),
  z.object({
    ...base,
    ...eventType('tool_execution_end'),
    ...call,
    /** True when the model read the result as an error: a failure, a block, or an interruption with nothing kept. */
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
    ...eventType('approval_requested'),
    ...call,
    /** The arguments' first EVENT_ARGUMENTS_CHARS characters; the pending approval holds them whole. */
    args: z.string(),
    /** SHA-256 (hex) of the whole arguments; absent in events of older workers. */
    argsSha256: z.string().optional(),
    /** The tool's risk level. */
    risk: RiskLevelSchema,
    /** Under an approval policy: whom it asks, how many must allow, and its deadlines. */
    asks: z.string().optional(),
  }),
  z.object({
    ...base,
    ...eventType('approval_decided'),
    ...call,
    /** `allow_once`, `allow_always`, `reject_once` or `reject_always`. */
    decision: ApprovalDecisionKindSchema,
    /** The approver (of the earlier always-decision, when one settled the request); `timeout` when it timed out. */
    by: z.string(),
    /** The approver's reason, when given. */
    reason: z.string().optional(),
  }),
  /** Under an approval policy: one approver's decision counted towards the request's quorum. */
  z.object({
    ...base,
    ...eventType('approval_counted'),
    ...call,
    /** `allow_once`, `allow_always`, `reject_once` or `reject_always`. */
    decision: ApprovalDecisionKindSchema,
    /** The approver. */
    by: z.string(),
    /** How far the quorum has come after it: "1 of 2 of leads have allowed". */
    progress: z.string(),
  }),
  /** Under an approval policy: nobody's quorum allowed in time, so the escalation group may decide too. */
  z.object({
    ...base,
    ...eventType('approval_escalated'),
    ...call,
    /** The escalation group, its members and how many of them must allow. */
    to: z.string(),
    /** The escalation group's members. */
    members: z.array(z.string()),
    /** How many of them must allow. */
    quorum: z.number().int(),
  }),
  z.object({
    ...base,
    ...eventType('steered'),
    /** The steering message's id. */
    messageId: z.string(),
    /** The steering message's text. */
    text: z.string(),
    /** Tool calls interrupted by this steer. */
    interrupted: z.array(z.string()),
  }),
  z.object({
    ...base,
    ...eventType('aborted'),
    /** Why, when the caller said. */
    reason: z.string().optional(),
    /** Who aborted the run, when named. */
    by: z.string().optional(),
    /** Tool calls interrupted by this abort. */
    interrupted: z.array(z.string()),
  }),
  /** A `sessions_spawn` call started a sub-agent: a child conversation, watchable by its id. */
  z.object({
    ...base,
    ...eventType('subagent_started'),
    /** The `sessions_spawn` call that started it. */
    toolCallId: z.string(),
    /** The child conversation's id. */
    conversationId: z.string(),
    /** The task the child was given. */
    task: z.string(),
  }),
  /** The oldest messages were replaced by a summary; the transcript starts a new generation. */
  z.object({
    ...base,
    ...eventType('compacted'),
    /** How many messages the summary replaced. */
    removedMessages: z.number().int(),
    /** How many messages were kept as they were. */
    keptMessages: z.number().int(),
    /** The transcript's estimated size before, in tokens. */
    tokensBefore: z.number().int(),
    /** The transcript's estimated size after, in tokens. */
    tokensAfter: z.number().int(),
  }),
  z.object({
    ...base,
    ...eventType('run_finished'),
    /** The messages the run answered. */
    messageIds: z.array(z.string()),
    /** How the run ended. */
    outcome: RunFinishedOutcomeSchema,
    /** The model's last text; empty when the run ended without one. */
    answer: z.string(),
    /**
     * When the outcome is `refused`: why, in the provider's words (bounded, without what a terminal
     * would act on); absent when it gave none.
     */
    refusal: z.string().optional(),
    /** Tokens the endpoint reported and tool calls run in this run; absent in events of older workers. */
    usage: z
      .object({
        /** Tokens, input plus output, as the endpoint reported them. */
        tokens: z.number().int(),
        /** Tool calls run. */
        toolCalls: z.number().int(),
        /** Of `tokens`, input read from the provider's prompt cache; absent when no call reported it. */
        cachedInputTokens: z.number().int().optional(),
        /** Of `tokens`, output the model spent reasoning; absent when no call reported it. */
        reasoningTokens: z.number().int().optional(),
        /** US dollars by the worker's price table; absent when no call was priced. */
        usd: z.number().optional(),
      })
      .optional(),
  }),
  /**
   * The run reached its budget and was stopped there instead of raising it: by whom (`timeout` when
   * nobody decided in time), how much of which part was used of how much. `run_finished` follows.
   */
  z.object({
    ...base,
    ...eventType('budget_exhausted'),
    /** The part that ran out: `tokens`, `toolCalls`, `deadlineMs`, `usd` or `dailyTokens`. */
    budget: z.enum(BUDGET_PAUSE_KINDS as [BudgetPauseKind, ...BudgetPauseKind[]]),
    /** Tokens, tool calls, ms since the conversation's start, or US dollars. */
    used: z.number(),
    /** What the budget allowed of it. */
    limit: z.number(),
    /** Who stopped the run; `timeout` when nobody decided in time. */
    by: z.string(),
    /** Their reason, when given. */
    reason: z.string().optional(),
  }),
  /** A RAP subscription's event entered the transcript as a `receive_event__injected` call. */
  z.object({
    ...base,
    ...eventType('subscription_event'),
    /** The call that started the subscription. */
    toolCallId: z.string(),
    /** The tool's name. */
    toolName: z.string(),
    /** The event's text, as the model reads it. */
    text: z.string(),
    /** The subscription's last event. */
    final: z.boolean(),
  }),
  /** A RAP tool asks the user to choose; `answerUserChoice` (or `choose` on the command line) answers. */
  z.object({
    ...base,
    ...eventType('user_choice_requested'),
    ...call,
    /** The question. */
    prompt: z.string(),
    /** The choices, in order. */
    choices: z.array(z.string()),
    /** The index of the choice taken when the user dismisses the question. */
    default: z.number().int(),
  }),
  z.object({
    ...base,
    ...eventType('user_choice_answered'),
    /** The call that asked. */
    toolCallId: z.string(),
    /** The index of the choice taken. */
    selected: z.number().int(),
    /** Who answered, when named. */
    by: z.string().optional(),
  }),
  /** A RAP tool needs the user to authorise it at `authUrl`; the call stays pending until it answers. */
  z.object({
    ...base,
    ...eventType('oauth_requested'),
    ...call,
    /** Where the user authorises the tool. */
    authUrl: z.string(),
  }),
  /** A RAP tool pushed new content for a view; the `rapViews` query has it. */
  z.object({
    ...base,
    ...eventType('view_updated'),
    /** The call whose view changed. */
    toolCallId: z.string(),
    /** The view's type, as the tool named it. */
    viewType: z.string(),
  }),
  /** Something went wrong and the conversation went on: an activity that failed for good, an ignored signal, a failed compaction. */
  z.object({
    ...base,
    ...eventType('error'),
    /** What went wrong. */
    message: z.string(),
  }),
  /** Something the user should fix that did not stop anything, e.g. a tool policy entry naming no tool. */
  z.object({
    ...base,
    ...eventType('warning'),
    /** What the user should fix. */
    message: z.string(),
  }),
]);
/**
 * One entry of a conversation's event log, told apart by `type`; `seq` orders them, `at` is
 * workflow time in ms.
 *
 * @useDeclaredType
 */
export type AgentEvent = z.infer<typeof AgentEventSchema>;
/** The kinds of event. */
export type AgentEventType = AgentEvent['type'];

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event before the log stamps it with its sequence number, time and run. */
export type NewAgentEvent = DistributiveOmit<AgentEvent, 'seq' | 'at' | 'run'>;
