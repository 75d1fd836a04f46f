import { z } from 'zod';
import { MAX_CLIENT_TOOL_RESULT_CHARS } from '../../shared/client-tools';
import { ApproveBodySchema } from '../gateway-api';

/**
 * AG-UI's run input (`RunAgentInput`), as far as the gateway reads it. The page sends its whole
 * conversation with every run; only what is new is delivered (the trailing user messages, tool
 * results for calls that wait, answers to interrupts), each exactly once. Every part is bounded.
 */

/** Messages one run input may carry: a page resends its conversation, so this is generous. */
export const MAX_AG_UI_MESSAGES = 2_000;
/** A user message's text, in characters. */
export const MAX_AG_UI_TEXT_CHARS = 100_000;

/** A message's content: text, or parts of which the text ones are read. */
const ContentSchema = z.union([
  z.string().max(MAX_AG_UI_TEXT_CHARS),
  z.array(z.looseObject({ type: z.string(), text: z.string().max(MAX_AG_UI_TEXT_CHARS).optional() })).max(64),
]);

/** One message of the page's conversation; roles the gateway does not deliver are passed over. */
export const AgUiMessageSchema = z.looseObject({
  id: z.string().min(1).max(256),
  role: z.string().max(32),
  content: ContentSchema.optional().nullable(),
  /** On a `tool` message: the call it answers. */
  toolCallId: z.string().min(1).max(256).optional(),
  /** On a `tool` message: the page's tool failed, and `content` (or this) says why. */
  error: z.string().max(MAX_CLIENT_TOOL_RESULT_CHARS).optional(),
});
export type AgUiMessage = z.infer<typeof AgUiMessageSchema>;

/** A tool the page offers; checked again, strictly, as a client tool. */
export const AgUiToolSchema = z.looseObject({
  name: z.string(),
  description: z.string(),
  parameters: z.unknown().optional(),
});

/** The answer to one interrupt: a decision on a pending approval, bound to its arguments' SHA-256. */
export const AgUiResumeSchema = z.looseObject({
  interruptId: z.string().min(1).max(300),
  status: z.enum(['resolved', 'cancelled']),
  payload: z.unknown().optional(),
});
export type AgUiResume = z.infer<typeof AgUiResumeSchema>;

/** What a resolved approval interrupt's `payload` is: the gateway's approval body, held to the same rules. */
export const AgUiDecisionSchema = ApproveBodySchema;

export const RunAgentInputSchema = z.looseObject({
  /** The conversation. */
  threadId: z.string().min(1).max(256),
  /** The page's name for this run, echoed in RUN_STARTED and RUN_FINISHED. */
  runId: z.string().min(1).max(256),
  messages: z.array(AgUiMessageSchema).max(MAX_AG_UI_MESSAGES),
  tools: z.array(AgUiToolSchema).max(64).optional(),
  state: z.unknown().optional(),
  context: z.array(z.unknown()).max(64).optional(),
  /** `lastEventId`: the `ag-ui` cursor of the last event the page saw, to resume after (like Last-Event-ID). */
  forwardedProps: z
    .looseObject({ lastEventId: z.string().max(400).optional() })
    .optional()
    .nullable(),
  resume: z.array(AgUiResumeSchema).max(64).optional(),
});
export type RunAgentInput = z.infer<typeof RunAgentInputSchema>;

/** The text of a message's content: its text parts joined. */
export function textOfContent(content: AgUiMessage['content']): string {
  if (content === undefined || content === null) return '';
  if (typeof content === 'string') return content;
  return content
    .filter((part) => part.type === 'text' && typeof part.text === 'string')
    .map((part) => part.text)
    .join('\n');
}

/** The interrupt id of a pending approval, as the page answers it. */
export function approvalInterruptId(toolCallId: string): string {
  return `approval:${toolCallId}`;
}

/** The tool call an approval interrupt id names; undefined for another id. */
export function toolCallOfInterrupt(interruptId: string): string | undefined {
  return interruptId.startsWith('approval:') ? interruptId.slice('approval:'.length) : undefined;
}
