import type { ExecSecurityMode } from './exec-security';

export interface ToolRunInput {
  conversationId: string;
  /** The model's id for the call; also the idempotency key handed to the tool. */
  toolCallId: string;
  toolName: string;
  arguments: Record<string, unknown>;
  workspace?: string;
  /** The conversation's agent (its memory); the default agent when absent. */
  agentId?: string;
  /** The conversation's `execSecurity` option; the worker's mode alone applies when absent. */
  execSecurity?: ExecSecurityMode;
  /** The conversations above this one, outermost first, when it is a sub-agent (RAP's `thread_ancestors`). */
  ancestors?: string[];
  /** Who sent the message the run answers, when named (RAP's `user_id`). */
  userId?: string;
}

/** Heartbeat details of a running tool or model call, as read by watchers through describe(). */
export type ActivityProgress =
  | { kind: 'tool'; toolCallId: string; toolName: string; text?: string; details?: unknown }
  | { kind: 'model'; text: string; toolCalls: number };
