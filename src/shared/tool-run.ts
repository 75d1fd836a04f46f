import type { ToolOutcome } from './tool-outcome';
import type { ExecSecurityMode } from './exec-security';

/**
 * Where a tool call happens: the same fields from the turn loop to the tool, built once per run and
 * carried unchanged (the tool's own context adds the opened workspace).
 */
export interface ToolCallScope {
  conversationId: string;
  /** The conversation's workspace; the worker's default when absent. */
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

/** What the tool activity gets: the call and its scope, flat, as activity inputs have always been. */
export interface ToolRunInput extends ToolCallScope {
  /** The model's id for the call; also the idempotency key handed to the tool. */
  toolCallId: string;
  toolName: string;
  arguments: Record<string, unknown>;
}

/**
 * A tool run as a local activity answers with its call's id too: the history records a local
 * activity's result but not its input, and readers of the history find the call by this id.
 */
export type LocalToolOutcome = ToolOutcome & { toolCallId: string };

/** The scope of a call as its tool sees it: `undefined` fields left out. */
export function definedScope(scope: ToolCallScope): ToolCallScope {
  return Object.fromEntries(
    Object.entries(scope).filter(([, value]) => value !== undefined),
  ) as ToolCallScope;
}

/** Heartbeat details of a running tool or model call, as read by watchers through describe(). */
export type ActivityProgress =
  | { kind: 'tool'; toolCallId: string; toolName: string; text?: string; details?: unknown }
  | {
      kind: 'model';
      /** The end of the text so far: at most MODEL_PROGRESS_TAIL_CHARS, so a heartbeat stays small. */
      text: string;
      /** How long the whole text is; absent from workers older than the tail. */
      textLength?: number;
      toolCalls: number;
      /** Where the call's text can be read as it arrives (the worker's push endpoint); absent when it has none. */
      live?: string;
      /**
       * With an https `live` whose worker made its own certificate: that certificate's SHA-256 (hex),
       * the only one a watcher accepts there. Absent for plain HTTP and for a certificate a CA vouches for.
       */
      livePin?: string;
    };

/** How much of a streaming answer each model heartbeat repeats. */
export const MODEL_PROGRESS_TAIL_CHARS = 16_000;
