import { z } from 'zod';
import { ApprovalDecisionKindSchema } from './approvals';
import { BudgetRaiseSchema } from './budget';

// The Agent2Agent protocol (A2A 1.0) as its JSON-RPC binding carries it: ProtoJSON, camelCase
// fields, SCREAMING_SNAKE enums. Requests are read strictly enough to be safe and loosely enough
// that fields a later minor version adds do not break a call: unknown keys are ignored, never used.

/** The protocol version this server speaks. */
export const A2A_PROTOCOL_VERSION = '1.0';

/** A task's states as the wire spells them. */
export const A2A_TASK_STATES = [
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
] as const;
export type A2ATaskState = (typeof A2A_TASK_STATES)[number];

/** States after which a task takes nothing more. */
export const A2A_TERMINAL_STATES: ReadonlySet<A2ATaskState> = new Set([
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
]);

/** The error codes of A2A's JSON-RPC binding (and JSON-RPC's own). */
export const A2A_ERROR_CODES = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  taskNotFound: -32001,
  taskNotCancelable: -32002,
  pushNotificationNotSupported: -32003,
  unsupportedOperation: -32004,
  contentTypeNotSupported: -32005,
  /** Implementation-defined: the request's token is missing, unknown or may not do this (HTTP 401 or 403). */
  unauthorized: -32099,
} as const;

/** Longest id (message, task, context) taken from a caller. */
const MAX_ID_CHARS = 512;
const Id = z.string().min(1).max(MAX_ID_CHARS);

/** One part of a message: text, structured data, or a file (by URL or inline), which this agent does not take. */
export const A2APartSchema = z.object({
  text: z.string().optional(),
  data: z.unknown().optional(),
  url: z.string().optional(),
  raw: z.string().optional(),
  mediaType: z.string().max(255).optional(),
  filename: z.string().max(1024).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});
export type A2APart = z.infer<typeof A2APartSchema>;

/** A message as a caller sends it. */
export const A2AMessageInSchema = z.object({
  messageId: Id,
  contextId: Id.optional(),
  taskId: Id.optional(),
  role: z.enum(['ROLE_USER', 'ROLE_AGENT']),
  parts: z.array(A2APartSchema).min(1).max(64),
  metadata: z.record(z.string(), z.unknown()).optional(),
  referenceTaskIds: z.array(Id).max(64).optional(),
});
export type A2AMessageIn = z.infer<typeof A2AMessageInSchema>;

export const A2ASendParamsSchema = z.object({
  message: A2AMessageInSchema,
  configuration: z
    .object({
      acceptedOutputModes: z.array(z.string()).optional(),
      /** Messages of the task's history to return: none with 0, all when absent. */
      historyLength: z.number().int().min(0).optional(),
      /** Answer at once with the task as it stands, instead of when it ends or waits for input. */
      returnImmediately: z.boolean().optional(),
      taskPushNotificationConfig: z.unknown().optional(),
    })
    .optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});
export type A2ASendParams = z.infer<typeof A2ASendParamsSchema>;

export const A2AGetTaskParamsSchema = z.object({
  id: Id,
  historyLength: z.number().int().min(0).optional(),
});

export const A2AListTasksParamsSchema = z.object({
  contextId: Id.optional(),
  status: z.enum(A2A_TASK_STATES).optional(),
  pageSize: z.number().int().min(1).max(100).optional(),
  pageToken: z.string().max(64).optional(),
  historyLength: z.number().int().min(0).optional(),
  includeArtifacts: z.boolean().optional(),
});
export type A2AListTasksParams = z.infer<typeof A2AListTasksParamsSchema>;

export const A2ATaskIdParamsSchema = z.object({ id: Id });

/**
 * A TaskPushNotificationConfig as a caller sends it (A2A 1.0); its values are checked, strictly,
 * when it is kept (`A2APushConfigSchema`).
 */
export const A2APushConfigParamsSchema = z.object({
  tenant: z.string().max(256).optional(),
  id: z.string().max(128).optional(),
  taskId: z.string().max(1_024).optional(),
  url: z.string(),
  token: z.string().optional(),
  authentication: z.object({ scheme: z.string(), credentials: z.string() }).optional(),
});
export type A2APushConfigParams = z.infer<typeof A2APushConfigParamsSchema>;

/** Get or delete one push notification config of a task. */
export const A2APushConfigIdParamsSchema = z.object({
  tenant: z.string().max(256).optional(),
  taskId: z.string().min(1).max(1_024),
  id: z.string().min(1).max(128),
});

/** List a task's push notification configs. */
export const A2AListPushConfigsParamsSchema = z.object({
  tenant: z.string().max(256).optional(),
  taskId: z.string().min(1).max(1_024),
  pageSize: z.number().int().min(0).optional(),
  pageToken: z.string().max(64).optional(),
});

/** A JSON-RPC 2.0 request; `params` is read by the method's own schema. */
export const JsonRpcRequestSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string().max(MAX_ID_CHARS), z.number(), z.null()]).optional(),
  method: z.string().min(1).max(128),
  params: z.unknown().optional(),
});
export type JsonRpcRequest = z.infer<typeof JsonRpcRequestSchema>;

/**
 * The data part a caller answers a pending approval with: which call, allow or reject, and the
 * SHA-256 of the arguments it decided on. Held to the rules of every decision: the approver is the
 * token's identity, a signature when the worker wants one, the approval policy's quorum.
 */
export const A2AApprovalDecisionSchema = z.strictObject({
  kind: z.literal('approval_decision'),
  toolCallId: z.string().min(1).max(256),
  decision: ApprovalDecisionKindSchema,
  argumentsSha256: z.string().regex(/^[0-9a-f]{64}$/, 'argumentsSha256 is 64 lowercase hex digits'),
  reason: z.string().max(4096).optional(),
  signature: z.string().min(1).max(200).optional(),
  signatureExpiresAt: z.number().int().positive().optional(),
  raise: BudgetRaiseSchema.optional(),
});
export type A2AApprovalDecision = z.infer<typeof A2AApprovalDecisionSchema>;

/** A message as this agent sends it (a task's status message, its history). */
export interface A2AMessageOut {
  messageId: string;
  contextId: string;
  taskId: string;
  role: 'ROLE_USER' | 'ROLE_AGENT';
  parts: A2APart[];
  metadata?: Record<string, unknown>;
}

export interface A2ATaskStatus {
  state: A2ATaskState;
  message?: A2AMessageOut;
  /** ISO 8601. */
  timestamp?: string;
}

export interface A2AArtifact {
  artifactId: string;
  name?: string;
  parts: A2APart[];
  metadata?: Record<string, unknown>;
}

export interface A2ATask {
  id: string;
  contextId: string;
  status: A2ATaskStatus;
  artifacts?: A2AArtifact[];
  history?: A2AMessageOut[];
  metadata?: Record<string, unknown>;
}

export interface A2AStatusUpdate {
  taskId: string;
  contextId: string;
  status: A2ATaskStatus;
  metadata?: Record<string, unknown>;
}

export interface A2AArtifactUpdate {
  taskId: string;
  contextId: string;
  artifact: A2AArtifact;
  append?: boolean;
  lastChunk?: boolean;
  metadata?: Record<string, unknown>;
}

/** One event of a streamed task, as its SSE frame's JSON-RPC result carries it. */
export type A2AStreamResponse =
  { task: A2ATask } | { statusUpdate: A2AStatusUpdate } | { artifactUpdate: A2AArtifactUpdate };

/** What the agent card says of the agent: set by whoever runs the gateway (`--a2a-card FILE`). */
export const A2ACardSettingsSchema = z.strictObject({
  name: z.string().trim().min(1).max(200),
  description: z.string().trim().min(1).max(4000),
  /** The agent new contexts (conversations) start for; `default` when absent. */
  agentId: z.string().min(1).max(64).optional(),
  version: z.string().min(1).max(64).optional(),
  provider: z.strictObject({ organization: z.string().min(1).max(200), url: z.url() }).optional(),
  documentationUrl: z.url().optional(),
  skills: z
    .array(
      z.strictObject({
        id: z.string().min(1).max(128),
        name: z.string().min(1).max(200),
        description: z.string().min(1).max(4000),
        tags: z.array(z.string().min(1).max(64)).max(32).default([]),
        examples: z.array(z.string().min(1).max(1000)).max(16).optional(),
      }),
    )
    .max(64)
    .default([]),
});
export type A2ACardSettings = z.infer<typeof A2ACardSettingsSchema>;
