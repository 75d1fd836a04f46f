import { z } from 'zod';

/**
 * Client tools: tools the sender of a message offers for the run that takes it (a web page's own
 * functions, offered through AG-UI), carried out by the sender, not by a worker. The model may call
 * them like any tool; the call then waits in the workflow, holding nothing on any worker, until the
 * sender answers with its result (the `clientToolResult` update), a steer or abort ends it, or the
 * conversation's approval timeout passes.
 */

/** The names a client tool may have: the names the model APIs accept for a function. */
export const CLIENT_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** Client tools one message may offer. */
export const MAX_CLIENT_TOOLS = 32;
/** Every client tool of one message together, as JSON: each is sent with every model call of its run. */
export const MAX_CLIENT_TOOLS_CHARS = 32 * 1024;
/** A client tool's result, in characters: as much of a tool's output as the model reads. */
export const MAX_CLIENT_TOOL_RESULT_CHARS = 64 * 1024;

export const ClientToolSchema = z.strictObject({
  /** The tool's name, as the model calls it. */
  name: z.string().regex(CLIENT_TOOL_NAME, 'a client tool name is 1-64 letters, digits, "_" or "-"'),
  /** What the tool does, for the model. */
  description: z.string().max(4_096),
  /** The arguments' JSON schema. */
  parameters: z.record(z.string(), z.unknown()),
});
/**
 * A tool the sender of a message carries out itself: its name, description and parameters.
 *
 * @useDeclaredType
 */
export type ClientTool = z.infer<typeof ClientToolSchema>;

/**
 * The client tools of one message: at most MAX_CLIENT_TOOLS, names unique, MAX_CLIENT_TOOLS_CHARS in
 * all. The refinements hold for what is not an array too: zod's standard validation runs them on
 * input its type check already refused.
 */
export const ClientToolsSchema = z
  .array(ClientToolSchema)
  .max(MAX_CLIENT_TOOLS)
  .refine(
    (tools) => !Array.isArray(tools) || new Set(tools.map((tool) => tool?.name)).size === tools.length,
    {
      message: 'two client tools have the same name',
    },
  )
  .refine((tools) => JSON.stringify(tools).length <= MAX_CLIENT_TOOLS_CHARS, {
    message: `the client tools are longer than ${MAX_CLIENT_TOOLS_CHARS} characters as JSON`,
  });

/** What the `clientToolResult` update takes: the sender's result for one waiting call. */
export const ClientToolResultSchema = z.strictObject({
  /** The call answered. */
  toolCallId: z.string().min(1, 'toolCallId is empty'),
  /** What the model reads. */
  text: z.string().max(MAX_CLIENT_TOOL_RESULT_CHARS),
  /** The tool failed: the model reads `text` as its error. */
  isError: z.boolean().optional(),
  /** Who answered, as the caller vouches. */
  by: z.string().trim().min(1).optional(),
});
/**
 * A client tool's result, as its sender delivers it.
 *
 * @useDeclaredType
 */
export type ClientToolResult = z.infer<typeof ClientToolResultSchema>;

/** A client tool call waiting for its sender's result, as the `pendingClientToolCalls` query shows it. */
export interface PendingClientToolCall {
  /** The call, as the model named it. */
  toolCallId: string;
  /** The client tool called. */
  toolName: string;
  /** The model's arguments (JSON text), whole. */
  arguments: string;
  /** The run the call belongs to. */
  run: number;
  /** Workflow time in ms when the call began to wait. */
  requestedAt: number;
  /** Workflow time in ms when it stops waiting and fails, if the conversation's approvals have a timeout. */
  expiresAt?: number;
}

/** The `clientToolResult` update's answer: the call answered. */
export interface ClientToolReceipt {
  /** The call answered. */
  toolCallId: string;
  /** Its tool. */
  toolName: string;
}
