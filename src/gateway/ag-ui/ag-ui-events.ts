/**
 * The AG-UI 1.0 events the gateway writes, with only the fields the protocol defines (its client
 * validates them). Model-written text travels in string fields only: data for the page to show as
 * text, never markup.
 */
export type AgUiEvent =
  | { type: 'RUN_STARTED'; threadId: string; runId: string; protocolVersion?: string }
  | { type: 'RUN_FINISHED'; threadId: string; runId: string; result?: unknown; outcome?: AgUiRunOutcome }
  | { type: 'RUN_ERROR'; message: string; code?: string }
  | { type: 'TEXT_MESSAGE_START'; messageId: string; role: 'assistant' }
  | { type: 'TEXT_MESSAGE_CONTENT'; messageId: string; delta: string }
  | { type: 'TEXT_MESSAGE_END'; messageId: string }
  | { type: 'TOOL_CALL_START'; toolCallId: string; toolCallName: string; parentMessageId?: string }
  | { type: 'TOOL_CALL_ARGS'; toolCallId: string; delta: string }
  | { type: 'TOOL_CALL_END'; toolCallId: string }
  | { type: 'TOOL_CALL_RESULT'; messageId: string; toolCallId: string; content: string; role: 'tool' }
  | { type: 'STATE_SNAPSHOT'; snapshot: AgUiState };

/** How an AG-UI run ended: done (perhaps leaving the page's tools to answer), waiting, or stopped. */
export type AgUiRunOutcome =
  | { type: 'success'; pendingToolCallIds?: string[] }
  | { type: 'interrupt'; interrupts: AgUiInterrupt[] }
  | { type: 'cancelled' };

/** A pending approval as an AG-UI interrupt: answered by a resume entry whose payload is the decision. */
export interface AgUiInterrupt {
  id: string;
  reason: string;
  message?: string;
  toolCallId?: string;
  responseSchema?: Record<string, unknown>;
  expiresAt?: string;
  metadata?: Record<string, unknown>;
}

/** What the page shows beside the messages: what waits for it, what the run may spend and has spent. */
export interface AgUiState {
  conversationId: string;
  /** idle, running or ended. */
  status: string;
  pendingApprovals: Array<{
    toolCallId: string;
    toolName: string;
    /** The model's arguments (JSON text), as the decision's `argumentsSha256` covers them. */
    arguments: string;
    argumentsSha256: string;
    risk: string;
    expiresAt?: string;
  }>;
  /** The page's own tool calls that wait for its result. */
  pendingClientToolCalls: Array<{ toolCallId: string; toolName: string; arguments: string }>;
  /** The budget's limits in force; null without one. */
  budget: unknown;
  /** Spent across the conversation; null from workers that do not say. */
  spent: unknown;
  /** The cursor of the last event written before this snapshot. */
  lastEventId: string;
}

/** The key of the gateway's own fields in an event's `metadata`. */
export const AG_UI_METADATA_KEY = 'durable-agent';

/** One SSE frame: the cursor as its id and in the event's metadata, the event as its data. */
export function agUiFrame(event: AgUiEvent, cursor: string): string {
  const data = JSON.stringify({ ...event, metadata: { [AG_UI_METADATA_KEY]: { lastEventId: cursor } } });
  return `id: ${cursor}\ndata: ${data}\n\n`;
}
