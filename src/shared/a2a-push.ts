import { defineQuery, defineUpdate } from '@temporalio/workflow';
import { z } from 'zod';
import type { A2AStatusUpdate } from './a2a';

// A2A push notifications: a caller asks to be told of a task's state changes by an HTTP POST to a
// URL of its own. The configurations live in the conversation's workflow (its state, carried by
// continue-as-new), and each notification is an activity, so no gateway or worker keeps them.

/** Longest push URL taken. */
export const MAX_PUSH_URL_CHARS = 2_048;
/** Longest notification token, and longest authentication credentials, taken. */
export const MAX_PUSH_TOKEN_CHARS = 1_024;
export const MAX_PUSH_CREDENTIALS_CHARS = 4_096;
/** Configurations one task may have, all callers together. */
export const MAX_PUSH_CONFIGS_PER_TASK = 10;
/** Tasks of one conversation that may have configurations at once; the oldest ended one makes room. */
export const MAX_PUSH_TASKS = 64;

/** The header that carries a configuration's `token` back to its receiver, as A2A names it. */
export const A2A_NOTIFICATION_TOKEN_HEADER = 'x-a2a-notification-token';
/** Where a notification's id is: stable across retries, never reused, for the receiver to drop repeats. */
export const A2A_NOTIFICATION_ID_KEY = 'durable-agent/notification-id';

/** Printable ASCII only: a header value with no line breaks or controls. */
const HeaderValue = /^[\x20-\x7e]*$/;

/** How the agent authenticates to the receiver: `Authorization: <scheme> <credentials>`. */
export const A2APushAuthenticationSchema = z.strictObject({
  /** An HTTP authentication scheme: `Bearer`, `Basic`, … */
  scheme: z
    .string()
    .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/, 'an HTTP authentication scheme (Bearer, Basic)'),
  /** What follows the scheme in the header. */
  credentials: z
    .string()
    .min(1)
    .max(MAX_PUSH_CREDENTIALS_CHARS)
    .regex(HeaderValue, 'credentials are printable ASCII'),
});

/** One push notification configuration, as a conversation keeps it for a task. */
export const A2APushConfigSchema = z.strictObject({
  /** The config's id among its owner's configs of the task. */
  id: z.string().min(1).max(128),
  /** Where notifications are POSTed (http or https). */
  url: z.url({ protocol: /^https?$/ }).max(MAX_PUSH_URL_CHARS),
  /** Sent back in `X-A2A-Notification-Token` with every notification. */
  token: z
    .string()
    .min(1)
    .max(MAX_PUSH_TOKEN_CHARS)
    .regex(HeaderValue, 'a token is printable ASCII')
    .optional(),
  /** Sent as `Authorization` with every notification. */
  authentication: A2APushAuthenticationSchema.optional(),
});
/**
 * An A2A push notification configuration: where a task's state changes are posted, and the token
 * and authentication they carry.
 *
 * @useDeclaredType
 */
export type A2APushConfig = z.infer<typeof A2APushConfigSchema>;

const Target = {
  /** The task's message, in the conversation (the task id is `CONVERSATION/MESSAGE`). */
  messageId: z.string().min(1).max(512),
  /** Who set it (a gateway token's name): only they read, replace or delete it. */
  owner: z.string().min(1).max(256),
};

/** Sets (adds or replaces, by owner and id) or deletes one configuration of a task. */
export const A2APushConfigChangeSchema = z.discriminatedUnion('op', [
  z.strictObject({
    /** Adds the config, or replaces the owner's config of the same id. */
    op: z.literal('set'),
    ...Target,
    /** The config. */
    config: A2APushConfigSchema,
  }),
  z.strictObject({
    /** Removes the owner's config of that id. */
    op: z.literal('delete'),
    ...Target,
    /** The config's id. */
    id: z.string().min(1).max(128),
  }),
]);
/**
 * A change of a task's push notification configurations: set (add or replace) one, or delete one.
 *
 * @useDeclaredType
 */
export type A2APushConfigChange = z.infer<typeof A2APushConfigChangeSchema>;

/** The change's answer: whether a configuration of that id was there before. */
export interface A2APushConfigReceipt {
  /** A configuration of that owner and id was there before (replaced, or deleted). */
  existed: boolean;
}

/**
 * Changes a task's push configurations. The validator refuses a message the conversation has not
 * taken, an ended conversation, more than MAX_PUSH_CONFIGS_PER_TASK, and a delete of nothing.
 */
export const a2aPushConfigUpdate = defineUpdate<A2APushConfigReceipt, [A2APushConfigChange]>('a2aPushConfig');

/** A task's configurations set by one owner, oldest first. */
export const a2aPushConfigsQuery = defineQuery<A2APushConfig[], [{ messageId: string; owner: string }]>(
  'a2aPushConfigs',
);

/** One notification as the workflow schedules it: where, how authenticated, and the body (an A2A StreamResponse). */
export interface A2APushDelivery {
  /** Stable across retries and workers, never reused by another notification. */
  notificationId: string;
  url: string;
  token?: string;
  authentication?: z.infer<typeof A2APushAuthenticationSchema>;
  body: { statusUpdate: A2AStatusUpdate };
}
