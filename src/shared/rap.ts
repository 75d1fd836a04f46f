import { z } from 'zod';

/**
 * The Reactive Agent Protocol (hydro-project/infinity docs/rap/spec):
 * what crosses between the worker's RAP callback server and a conversation.
 */

/** The reserved name of the synthetic call a subscription event enters the transcript as; the model may not call it. */
export const RECEIVE_EVENT_TOOL_NAME = 'receive_event__injected';
/** The built-in tool that ends one of the conversation's subscriptions; the workflow runs it itself. */
export const CANCEL_SUBSCRIPTION_TOOL_NAME = 'cancel_subscription';

/** What a RAP tool_result adds to a tool result's `details`, for user interfaces and the workflow. */
export const RapResultDetailsSchema = z.object({
  rap: z.object({
    /** The result started a subscription: later events arrive on the same callback URL. */
    subscription: z.boolean().optional(),
    /** The tool's display segments, kept for user interfaces; the model reads `text`/`content`. */
    displayAs: z.array(z.unknown()).optional(),
    callId: z.string().nullable().optional(),
  }),
});
export type RapResultDetails = z.infer<typeof RapResultDetailsSchema>;

/**
 * A callback message the server hands to the conversation (after checking its token): everything
 * but `tool_result`, which completes the tool's activity instead.
 */
export const RapConversationMessageSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('subscription_event'),
    /** The call that started the subscription. */
    toolCallId: z.string().min(1),
    text: z.string(),
    associative: z.boolean().optional(),
    /** The subscription's last event: it ends with this one. */
    final: z.boolean().optional(),
  }),
  z.object({
    type: z.literal('user_choice'),
    toolCallId: z.string().min(1),
    callId: z.string().nullable().optional(),
    prompt: z.string(),
    choices: z.array(z.string()).min(1),
    default: z.number().int().min(0),
    responseUrl: z.string().url(),
  }),
  z.object({
    type: z.literal('oauth'),
    toolCallId: z.string().min(1),
    callId: z.string().nullable().optional(),
    authUrl: z.string().url(),
  }),
  z.object({
    type: z.literal('view_update'),
    /** The call whose callback URL carried it. */
    toolCallId: z.string().min(1),
    viewType: z.string().min(1),
    content: z.record(z.string(), z.unknown()),
  }),
]);
export type RapConversationMessage = z.infer<typeof RapConversationMessageSchema>;

/** A person's answer to a RAP tool's choice. */
export const UserChoiceAnswerSchema = z.object({
  /** The call that asked. */
  toolCallId: z.string().min(1),
  /** Index into the choices; the tool's default when absent (the prompt was dismissed). */
  selected: z.number().int().min(0).optional(),
  /** Who answered. */
  by: z.string().optional(),
});
export type UserChoiceAnswer = z.infer<typeof UserChoiceAnswerSchema>;

/** What the workflow asks the worker to tell RAP tool servers, best effort and never retried. */
export type RapNotice =
  | { kind: 'close_thread'; conversationId: string }
  | { kind: 'cancel_tool_call'; conversationId: string; toolCallId: string }
  | { kind: 'user_choice_response'; responseUrl: string; toolCallId: string; selected: number };
