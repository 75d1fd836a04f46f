import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { GatewayAction } from '../gateway/gateway-api';
import { ApprovalDecisionKindSchema } from '../shared/approvals';
import { parametersJsonSchema } from '../tools/json-schema';
import { StatusReportSchema } from './run-report';

/** The longest a call waits for its run's answer before it returns what stands. */
export const MAX_WAIT_SECONDS = 300;
/** The longest message a tool sends. */
const MAX_TEXT_CHARS = 200_000;

const conversationId = z
  .string()
  .min(1)
  .max(200)
  .describe('The conversation, as start_task returned it (conversation_id).');
const waitSeconds = z
  .number()
  .int()
  .min(0)
  .max(MAX_WAIT_SECONDS)
  .optional()
  .describe(
    `Seconds to wait for the agent's answer before returning (0, the default: return at once; at most ${MAX_WAIT_SECONDS}). The agent goes on working whatever you choose.`,
  );
const requestKey = z
  .string()
  .regex(/^[\x21-\x7e]{1,200}$/, 'request_key is 1 to 200 printable ASCII characters without spaces')
  .optional()
  .describe(
    'A key you make up for this one message (e.g. "refactor-auth-1"). If a call fails or times out and you call again for the same message, pass the same key: it is sent once. Use a new key for each new message.',
  );

export const StartTaskInput = z.strictObject({
  task: z
    .string()
    .min(1)
    .max(MAX_TEXT_CHARS)
    .describe(
      'What the agent should do, in full: it sees only this text (and what its own tools find), not your conversation.',
    ),
  agent: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .describe('Which agent does it, by its id, when the server has several; the default agent when absent.'),
  conversation_id: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('An id for the new conversation; one is made when absent (the usual case).'),
  wait_seconds: waitSeconds,
  request_key: requestKey,
});

export const SendMessageInput = z.strictObject({
  conversation_id: conversationId,
  text: z.string().min(1).max(MAX_TEXT_CHARS).describe('The message to the agent.'),
  wait_seconds: waitSeconds,
  request_key: requestKey,
});

export const GetStatusInput = z.strictObject({
  conversation_id: conversationId,
  message_id: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe(
      'The message (as start_task or send_message returned its message_id) whose run to report on; the conversation as a whole when absent.',
    ),
});

export const DecideApprovalInput = z.strictObject({
  conversation_id: conversationId,
  tool_call_id: z
    .string()
    .min(1)
    .max(500)
    .describe('The waiting call, as get_status lists it (tool_call_id).'),
  decision: ApprovalDecisionKindSchema.describe(
    'allow_once: run this call. allow_always: run it, and this tool from now on in this conversation. reject_once: refuse this call (the agent is told and goes on). reject_always: refuse this tool from now on in this conversation.',
  ),
  arguments_sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'arguments_sha256 is 64 lowercase hex digits')
    .describe(
      'The SHA-256 of the arguments you decide on, as get_status shows it: the decision holds for exactly those arguments.',
    ),
  reason: z.string().max(1_000).optional().describe('Why, for the record (the agent reads it on a reject).'),
});

export const AbortRunInput = z.strictObject({
  conversation_id: conversationId,
  reason: z.string().max(1_000).optional().describe('Why, for the record.'),
});

export const DecisionReportSchema = z.object({
  conversationId: z.string(),
  toolCallId: z.string(),
  toolName: z.string(),
  decision: ApprovalDecisionKindSchema,
  /** Under an approval policy whose quorum is not met yet: how far it is. */
  waitingFor: z.string().optional(),
  note: z.string(),
});

export const AbortReportSchema = z.object({
  conversationId: z.string(),
  run: z.number().int(),
  note: z.string(),
});

/** One tool of the server: its MCP description, the zod schema its arguments are parsed with, and what it needs. */
export interface AgentToolSpec {
  tool: Tool;
  input: z.ZodType;
  /** The actions a caller needs for it; a caller without them does not see it listed. */
  actions: GatewayAction[];
}

function spec(
  name: string,
  fields: {
    title: string;
    description: string;
    input: z.ZodType;
    output: z.ZodType;
    actions: GatewayAction[];
    annotations: Tool['annotations'];
    task?: boolean;
  },
): AgentToolSpec {
  return {
    input: fields.input,
    actions: fields.actions,
    tool: {
      name,
      title: fields.title,
      description: fields.description,
      inputSchema: parametersJsonSchema(fields.input) as Tool['inputSchema'],
      outputSchema: outputJsonSchema(fields.output),
      annotations: { title: fields.title, ...fields.annotations },
      ...(fields.task ? { execution: { taskSupport: 'optional' as const } } : {}),
    },
  };
}

function outputJsonSchema(schema: z.ZodType): Tool['outputSchema'] {
  const json = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  return json as Tool['outputSchema'];
}

export const AGENT_TOOLS: AgentToolSpec[] = [
  spec('start_task', {
    title: 'Start a task for a durable agent',
    description: [
      'Hand a task to a durable background agent. It starts a new conversation in which the agent works on the task with its own tools, on a server: it keeps going when you disconnect or restart, and survives restarts of the server.',
      "Returns at once with the conversation_id and message_id, or, with wait_seconds, waits up to that long and returns the agent's answer if it finished by then.",
      'Afterwards: get_status reads its progress and answer, send_message adds instructions or answers its question, decide_approval allows or rejects a tool call it waits for, abort_run stops it.',
      'Use it for long or independent work to be done outside this chat; clients that support MCP tasks may run it as a task.',
    ].join(' '),
    input: StartTaskInput,
    output: StatusReportSchema,
    actions: ['start', 'send'],
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    task: true,
  }),
  spec('send_message', {
    title: "Send a message to a durable agent's conversation",
    description: [
      'Send a follow-up message to a conversation that start_task made: more instructions, an answer to a question the agent asked, a correction.',
      'If the agent is in the middle of a run, the message waits until that run ends and the next run answers it.',
      'Returns at once with its message_id, or waits up to wait_seconds for the run that answers it.',
      'Not for new tasks (start_task) or for approvals (decide_approval).',
    ].join(' '),
    input: SendMessageInput,
    output: StatusReportSchema,
    actions: ['send'],
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    task: true,
  }),
  spec('get_status', {
    title: "Read where a durable agent's conversation stands",
    description: [
      'Read, at once, where a conversation stands: whether the agent is working, waiting for an approval, idle or ended;',
      'each approval it waits for, with the arguments and the tool_call_id and arguments_sha256 that decide_approval needs;',
      "and the agent's latest answer. With message_id (from start_task or send_message): where the run answering that message stands, and its answer once it finished.",
      'Read-only; call it as often as you like.',
    ].join(' '),
    input: GetStatusInput,
    output: StatusReportSchema,
    actions: ['status'],
    annotations: { readOnlyHint: true, openWorldHint: false },
  }),
  spec('decide_approval', {
    title: 'Allow or reject a tool call a durable agent waits on',
    description: [
      "Allow or reject one tool call a conversation's agent is waiting on (get_status lists them, with their arguments).",
      'The decision counts only for the exact arguments whose SHA-256 you pass, so read them first; it is recorded as made by you.',
      'A run paused at its budget waits as tool_call_id budget-N: allowing raises its budget, rejecting stops the run.',
      'Refused when the call is no longer waiting (decided elsewhere) or you may not decide there.',
    ].join(' '),
    input: DecideApprovalInput,
    output: DecisionReportSchema,
    actions: ['approve'],
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  }),
  spec('abort_run', {
    title: "Abort a durable agent's run in progress",
    description: [
      "Stop the run a conversation's agent is working on now: its model call and running tools are cancelled and the run ends as aborted.",
      'The conversation stays and takes new messages (send_message). Refused when no run is in progress.',
    ].join(' '),
    input: AbortRunInput,
    output: AbortReportSchema,
    actions: ['abort'],
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  }),
];
