import { randomUUID } from 'node:crypto';
import {
  ElicitResultSchema,
  type JSONRPCMessage,
  type JSONRPCRequest,
  RELATED_TASK_META_KEY,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { AgentClient } from '../client/agent-client';
import {
  type ApprovalDecisionKind,
  ApprovalDecisionKindSchema,
  type PendingApproval,
} from '../shared/approvals';
import type { McpCaller } from './mcp-caller';
import { fenced, line } from './quoted-text';

/**
 * An approval the run waits for, asked of the client's person as a form elicitation. The request's
 * JSON-RPC id names the conversation, the call and the arguments' SHA-256, so whichever gateway the
 * client's answer reaches decides with it, as the answering request's caller, through the same
 * approve path as `decide_approval`: nothing waits in one process for the answer.
 */
const ID_PREFIX = 'durable-agent/approval.';
const MAX_ID_CHARS = 2_048;
/** The arguments a question shows at most; the decision still covers them whole, by their SHA-256. */
const SHOWN_ARGUMENTS_CHARS = 4_000;

const AskedSchema = z.strictObject({
  c: z.string().min(1).max(200),
  t: z.string().min(1).max(500),
  s: z.string().regex(/^[0-9a-f]{64}$/),
  n: z.string().max(64),
});

const CHOICES: Array<{ const: ApprovalDecisionKind; title: string }> = [
  { const: 'allow_once', title: 'Allow once' },
  { const: 'allow_always', title: 'Always allow this tool in this conversation' },
  { const: 'reject_once', title: 'Reject' },
  { const: 'reject_always', title: 'Always reject this tool in this conversation' },
];

/** A person's answer to one approval question. */
export interface DecisionAnswer {
  conversationId: string;
  toolCallId: string;
  argumentsSha256: string;
  /** The decision, or none (dismissed, or an error instead of an answer). */
  decision?: ApprovalDecisionKind;
  reason?: string;
}

export function elicitationIdOf(conversationId: string, pending: PendingApproval): string {
  const asked = { c: conversationId, t: pending.toolCallId, s: pending.argumentsSha256, n: randomUUID() };
  return `${ID_PREFIX}${Buffer.from(JSON.stringify(asked)).toString('base64url')}`;
}

/** The `elicitation/create` request that asks about `pending`. */
export function approvalQuestion(
  conversationId: string,
  pending: PendingApproval,
  relatedTaskId?: string,
): JSONRPCRequest & { id: string } {
  const rejectOnly = pending.budget?.kind === 'dailyTokens';
  const shown =
    pending.arguments.length > SHOWN_ARGUMENTS_CHARS
      ? `${pending.arguments.slice(0, SHOWN_ARGUMENTS_CHARS)}…`
      : pending.arguments;
  const cut =
    pending.argumentsTruncated || shown !== pending.arguments
      ? ` (cut: ${pending.argumentsLength} characters in all)`
      : '';
  const message = [
    `A durable agent (conversation ${line(conversationId, 200)}) waits for your approval to run ${line(pending.toolName, 100)} (risk ${pending.risk}).`,
    `Its arguments${cut}, as the model wrote them:`,
    fenced(shown, { showUnprintable: true }),
    `The decision holds only for exactly these arguments (SHA-256 ${pending.argumentsSha256}).`,
  ].join('\n\n');
  return {
    jsonrpc: '2.0',
    id: elicitationIdOf(conversationId, pending),
    method: 'elicitation/create',
    params: {
      mode: 'form',
      message,
      requestedSchema: {
        type: 'object',
        properties: {
          decision: {
            type: 'string',
            title: 'Decision',
            oneOf: CHOICES.filter((choice) => !rejectOnly || choice.const.startsWith('reject')),
          },
          reason: { type: 'string', title: 'Reason (optional)', maxLength: 500 },
        },
        required: ['decision'],
      },
      ...(relatedTaskId !== undefined
        ? { _meta: { [RELATED_TASK_META_KEY]: { taskId: relatedTaskId } } }
        : {}),
    },
  };
}

/** Whether `message` answers one of our questions (a response or an error whose id we made). */
export function isDecisionAnswer(message: unknown): boolean {
  const id = (message as { id?: unknown } | null)?.id;
  return (
    typeof message === 'object' &&
    message !== null &&
    !('method' in message) &&
    typeof id === 'string' &&
    id.startsWith(ID_PREFIX)
  );
}

/**
 * The answer `message` carries, or undefined when it answers none of our questions. Accept with a
 * decision decides it; decline rejects once (the person said no); cancel, or an error, decides nothing.
 */
export function decisionAnswerOf(message: unknown): DecisionAnswer | undefined {
  if (!isDecisionAnswer(message)) return undefined;
  const { id, result } = message as { id: string; result?: unknown };
  if (id.length > MAX_ID_CHARS) return undefined;
  let asked: z.infer<typeof AskedSchema>;
  try {
    const parsed = AskedSchema.safeParse(
      JSON.parse(Buffer.from(id.slice(ID_PREFIX.length), 'base64url').toString('utf8')),
    );
    if (!parsed.success) return undefined;
    asked = parsed.data;
  } catch {
    return undefined;
  }
  const base = { conversationId: asked.c, toolCallId: asked.t, argumentsSha256: asked.s };
  const answer = ElicitResultSchema.safeParse(result);
  if (!answer.success) return base;
  if (answer.data.action === 'decline') return { ...base, decision: 'reject_once', reason: 'declined' };
  if (answer.data.action !== 'accept') return base;
  const decision = ApprovalDecisionKindSchema.safeParse(answer.data.content?.decision);
  if (!decision.success) return base;
  const reason = answer.data.content?.reason;
  return {
    ...base,
    decision: decision.data,
    ...(typeof reason === 'string' && reason.trim() ? { reason: reason.slice(0, 500) } : {}),
  };
}

/**
 * Decides as `caller`, held to the rules of every decision (the caller's scope, its identity as the
 * approver, the door's signature, the arguments' hash); what the conversation refuses is told to
 * `log`. Returns whether the decision was taken.
 */
export async function applyDecisionAnswer(
  agent: AgentClient,
  caller: McpCaller,
  answer: DecisionAnswer,
  log: (line: string) => void,
): Promise<boolean> {
  if (answer.decision === undefined) return false;
  try {
    await caller.authorize('approve', answer.conversationId);
    await agent.approve(
      answer.conversationId,
      caller.decision(answer.conversationId, {
        toolCallId: answer.toolCallId,
        decision: answer.decision,
        by: caller.name,
        argumentsSha256: answer.argumentsSha256,
        ...(answer.reason !== undefined ? { reason: answer.reason } : {}),
      }),
    );
    return true;
  } catch (error) {
    log(
      `! the approval of ${answer.toolCallId} in ${answer.conversationId} was not taken: ${(error as Error).message}`,
    );
    return false;
  }
}

/**
 * Asks the client's person about each approval one run waits for, once per follow, and withdraws a
 * question (`notifications/cancelled`) once the call is decided elsewhere.
 */
export class ApprovalAsker {
  private readonly asked = new Map<string, string>();

  constructor(
    private readonly deps: {
      agent: AgentClient;
      conversationId: string;
      /** Writes a message on the stream of the request that follows the run. */
      send: (message: JSONRPCMessage) => Promise<void>;
      relatedTaskId?: string;
    },
  ) {}

  /** Asks about the calls of `run` still waiting that were not asked about yet. */
  async askPending(run: number): Promise<void> {
    const pending = await this.deps.agent.pendingApprovals(this.deps.conversationId);
    for (const approval of pending) {
      if (approval.run !== run || this.asked.has(approval.toolCallId)) continue;
      const question = approvalQuestion(this.deps.conversationId, approval, this.deps.relatedTaskId);
      this.asked.set(approval.toolCallId, question.id);
      await this.deps.send(question);
    }
  }

  /** Withdraws the question about `toolCallId`, if one was asked. */
  async withdraw(toolCallId: string): Promise<void> {
    const requestId = this.asked.get(toolCallId);
    if (requestId === undefined) return;
    await this.deps.send({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId, reason: 'decided elsewhere' },
    });
  }
}
