/**
 * Lenient readers for the values a conversation's history holds (activity inputs and results,
 * signal and update arguments). Histories outlive the code that wrote them, so a reader takes what
 * it recognises and never throws: a field it cannot read is left out of the timeline.
 */

import { type ToolOutcomeFields, readOutcomeFields } from '../shared/tool-outcome';

type Fields = Record<string, unknown>;

export function fieldsOf(value: unknown): Fields | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Fields) : undefined;
}

export function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function numberOf(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function cut(text: string, chars: number): string {
  return text.length <= chars ? text : `${text.slice(0, chars)}…`;
}

export interface UserMessageValue {
  messageId: string;
  text: string;
  sender?: string;
}

/** A `userMessage` or `steer` argument: `{text, messageId, sender?}`. */
export function readUserMessageInput(value: unknown): UserMessageValue | undefined {
  const fields = fieldsOf(value);
  const text = stringOf(fields?.text);
  const messageId = stringOf(fields?.messageId);
  if (text === undefined || messageId === undefined) return undefined;
  const sender = stringOf(fields?.sender);
  return { messageId, text, ...(sender !== undefined ? { sender } : {}) };
}

export interface ToolCallValue {
  id: string;
  name: string;
  arguments: string;
}

export interface AssistantReplyValue {
  text: string;
  toolCalls: ToolCallValue[];
  model?: string;
  usage?: { inputTokens: number; outputTokens: number };
}

/** A `callModel` result: an assistant message with text and tool-call blocks. */
export function readAssistantReply(value: unknown): AssistantReplyValue | undefined {
  const fields = fieldsOf(value);
  if (!fields || !Array.isArray(fields.content)) return undefined;
  let text = '';
  const toolCalls: ToolCallValue[] = [];
  for (const block of fields.content.map(fieldsOf)) {
    if (block?.type === 'text') text += stringOf(block.text) ?? '';
    const id = stringOf(block?.id);
    const name = stringOf(block?.name);
    if (block?.type === 'toolCall' && id !== undefined && name !== undefined) {
      toolCalls.push({ id, name, arguments: stringOf(block.arguments) ?? '' });
    }
  }
  const usage = fieldsOf(fields.usage);
  const inputTokens = numberOf(usage?.inputTokens);
  const outputTokens = numberOf(usage?.outputTokens);
  const model = stringOf(fields.model);
  return {
    text,
    toolCalls,
    ...(model !== undefined ? { model } : {}),
    ...(inputTokens !== undefined && outputTokens !== undefined
      ? { usage: { inputTokens, outputTokens } }
      : {}),
  };
}

/** The messages a `callModel` input carries (those added since the previous call). */
export function readModelInputMessages(value: unknown): Fields[] {
  const transcript = fieldsOf(fieldsOf(value)?.transcript);
  return arrayOf(transcript?.newMessages).flatMap((message) => {
    const fields = fieldsOf(message);
    return fields ? [fields] : [];
  });
}

export interface ToolOutcomeValue extends Partial<ToolOutcomeFields> {
  text: string;
  isError?: boolean;
  aborted?: boolean;
}

/**
 * A `runTool` result or a tool-result message: text blocks, `isError`, `aborted`, and the outcome's
 * fields (derived from `isError`, `aborted` and `details` for outcomes recorded before they existed).
 */
export function readToolOutcome(value: unknown): ToolOutcomeValue | undefined {
  const fields = fieldsOf(value);
  if (!fields || !Array.isArray(fields.content)) return undefined;
  const text = fields.content
    .map(fieldsOf)
    .map((block) =>
      block?.type === 'text' ? (stringOf(block.text) ?? '') : block ? `[${String(block.type)}]` : '',
    )
    .join('\n');
  return {
    text,
    ...(typeof fields.isError === 'boolean' ? { isError: fields.isError } : {}),
    ...(fields.aborted === true ? { aborted: true } : {}),
    ...readOutcomeFields(fields),
  };
}

export interface ToolRunInputValue {
  toolCallId: string;
  toolName: string;
  arguments: unknown;
}

/** A `runTool` input: `{toolCallId, toolName, arguments}`. */
export function readToolRunInput(value: unknown): ToolRunInputValue | undefined {
  const fields = fieldsOf(value);
  const toolCallId = stringOf(fields?.toolCallId);
  const toolName = stringOf(fields?.toolName);
  if (toolCallId === undefined || toolName === undefined) return undefined;
  return { toolCallId, toolName, arguments: fields?.arguments };
}

/** An approval decision: `{toolCallId, decision, by, reason?}`. */
export function readApprovalDecision(
  value: unknown,
): { toolCallId: string; decision: string; by: string; reason?: string } | undefined {
  const fields = fieldsOf(value);
  const toolCallId = stringOf(fields?.toolCallId);
  const decision = stringOf(fields?.decision);
  if (toolCallId === undefined || decision === undefined) return undefined;
  const reason = stringOf(fields?.reason);
  return {
    toolCallId,
    decision,
    by: stringOf(fields?.by) ?? '',
    ...(reason !== undefined ? { reason } : {}),
  };
}

/** An abort request: `{reason?, by?}`. */
export function readAbortInput(value: unknown): { reason?: string; by?: string } {
  const fields = fieldsOf(value);
  const reason = stringOf(fields?.reason);
  const by = stringOf(fields?.by);
  return { ...(reason !== undefined ? { reason } : {}), ...(by !== undefined ? { by } : {}) };
}

export interface StartInputValue {
  options?: unknown;
  maxToolIterations?: number;
  initialMessage?: UserMessageValue;
  carried?: { messages: number; queuedMessages: number; runCount: number };
  /** Ids of the messages carried over that no run has taken yet. */
  queuedMessageIds: string[];
  /** A run the previous execution paused between two turns, and the model call it resumes with. */
  pausedRun?: { run: number; iteration: number };
}

/** The conversation workflow's input: `{options?, initialMessage?, carried?}`. */
export function readStartInput(value: unknown): StartInputValue {
  const fields = fieldsOf(value);
  const options = fields?.options;
  const maxToolIterations = numberOf(fieldsOf(options)?.maxToolIterations);
  const initialMessage = readUserMessageInput(fields?.initialMessage);
  const carried = fieldsOf(fields?.carried);
  const queuedMessageIds = arrayOf(carried?.queue).flatMap((message) => {
    const messageId = stringOf(fieldsOf(message)?.messageId);
    return messageId !== undefined ? [messageId] : [];
  });
  const paused = fieldsOf(carried?.paused);
  const pausedRun = numberOf(paused?.run);
  const pausedIteration = numberOf(paused?.iteration);
  return {
    queuedMessageIds,
    ...(pausedRun !== undefined && pausedIteration !== undefined
      ? { pausedRun: { run: pausedRun, iteration: pausedIteration } }
      : {}),
    ...(options !== undefined ? { options } : {}),
    ...(maxToolIterations !== undefined ? { maxToolIterations } : {}),
    ...(initialMessage ? { initialMessage } : {}),
    ...(carried
      ? {
          carried: {
            messages: arrayOf(fieldsOf(carried.transcript)?.messages).length,
            queuedMessages: arrayOf(carried.queue).length,
            runCount: numberOf(carried.runCount) ?? 0,
          },
        }
      : {}),
  };
}

/** The numeric fields of a receipt (`{run}`, `{interrupting}`), by name. */
export function receiptField(value: unknown, name: string): unknown {
  return fieldsOf(value)?.[name];
}
