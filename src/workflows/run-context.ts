import type { ClientTool } from '../shared/client-tools';
import type { ConversationOptions } from '../shared/conversation-options';
import type { RapNotice } from '../shared/rap';
import type { ToolDescriptor } from '../shared/tool-descriptor';
import type { ApprovalBook } from './approval-book';
import type { ClientToolCalls } from './client-tool-calls';
import type { CompactionRequests } from './compaction';
import type { ConversationBudget } from './conversation-budget';
import type { EventLog } from './event-log';
import type { RapThread } from './rap-thread';
import type { RunControl } from './run-control';
import type { DefaultPrompts } from './run-system-prompt';
import type { Transcript } from './transcript';

/** What a run works with: the conversation's state and the worker's tools, and how it is steered. */
export interface RunContext {
  conversationId: string;
  run: number;
  options: ConversationOptions;
  transcript: Transcript;
  events: EventLog;
  /** Tools the worker offers, looked up once per conversation. */
  tools: () => Promise<ReadonlyMap<string, ToolDescriptor>>;
  /** The default system prompt the worker wrote for this execution, kept for the day. */
  defaultPrompts: DefaultPrompts;
  approvals: ApprovalBook;
  /** Steer and abort for this run; the loop runs inside `control.scope`. */
  control: RunControl;
  compactionRequests: CompactionRequests;
  /** What the conversation has spent, and where its runs pause for a decision on their budget. */
  budget: ConversationBudget;
  /** RAP subscriptions and their waiting events, user choices, views. */
  rap: RapThread;
  /** Client tool calls waiting for their sender's result. */
  clientCalls: ClientToolCalls;
  /** Sends a best-effort notice to the RAP tool servers without waiting for it. */
  notify: (notice: RapNotice) => void;
  /** The history is long enough to continue as new (Temporal's suggestion or `maxHistoryEvents`). */
  historyIsLong: () => boolean;
}

/** A run handed over to the next execution between two turns (continue-as-new), and where it stood. */
export interface PausedRun {
  run: number;
  messageIds: string[];
  /** The model call it resumes with. */
  iteration: number;
  ownersRun: boolean;
  senderOfRun?: string;
  /** Sub-agents the run has started so far. */
  subAgentsStarted?: number;
  /** The default system prompt the worker wrote at the run's start, kept for the rest of the run. */
  systemPrompt?: string;
  /** The client tools the run offers (client-tools.ts); absent when it offers none. */
  clientTools?: ClientTool[];
}
