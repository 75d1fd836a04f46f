export interface ToolRunInput {
  conversationId: string;
  /** The model's id for the call; also the idempotency key handed to the tool. */
  toolCallId: string;
  toolName: string;
  arguments: Record<string, unknown>;
  workspace?: string;
}

/** Heartbeat details of a running tool or model call, as read by watchers through describe(). */
export type ActivityProgress =
  | { kind: 'tool'; toolCallId: string; toolName: string; text?: string; details?: unknown }
  | { kind: 'model'; text: string; toolCalls: number };
