import type { PendingApproval } from '../../shared/approvals';
import type { ClientTool, PendingClientToolCall } from '../../shared/client-tools';
import { MAX_CLIENT_TOOL_RESULT_CHARS } from '../../shared/client-tools';
import { ConversationNotFoundError, UpdateRefusedError } from '../../shared/conversation-errors';
import type { GatewayAction, GatewayToken } from '../gateway-api';
import type { GatewayAccess } from '../gateway-access';
import type { GatewayDeps } from '../gateway-deps';
import { BadRequest } from '../gateway-errors';
import { keyedMessageId } from '../idempotency-key';
import { authorize as authorizeToken } from '../gateway-tokens';
import { parseBody } from '../gateway-request';
import { decideAs } from '../gateway-decision';
import {
  AgUiDecisionSchema,
  type AgUiMessage,
  type AgUiResume,
  type RunAgentInput,
  textOfContent,
  toolCallOfInterrupt,
} from './ag-ui-input';

/** What waits for the page: approvals, and calls of its own tools. */
export interface Waiting {
  approvals: PendingApproval[];
  clientCalls: PendingClientToolCall[];
}

/** What a run input delivered: where its events start, and whether the conversation has work from it. */
export interface AgUiIntake {
  /** The conversation's last event before anything was delivered. */
  before: number;
  /** What waited for the page before the input and still does: the page knows of it, and no event will tell it again. */
  stillWaiting: Waiting;
  /** Events up to here came before what this input delivered. */
  afterSeq: number;
  /** Runs up to this one did not take its message: their end is not this AG-UI run's. */
  afterRun: number;
  /** A message, a decision or a tool result was taken (now or by an earlier delivery of the same input). */
  delivered: boolean;
}

/**
 * Delivers what is new in a run input, each part exactly once, as the token's identity and within its
 * scope: decisions answering interrupts (a decision on an approval no longer pending is passed over:
 * it was taken), the page's results for its tool calls that wait, and the trailing user messages
 * under ids made from the token and the page's message ids (so a repeated input is not run twice).
 */
export async function deliverRunInput(
  deps: GatewayDeps,
  access: GatewayAccess,
  token: GatewayToken,
  input: RunAgentInput,
  beforeDelivering: (afterSeq: number) => void,
): Promise<AgUiIntake> {
  const id = input.threadId;
  const messages = trailingUserMessages(input.messages);
  const authorized = new Set<GatewayAction>();
  const authorize = async (action: GatewayAction) => {
    if (!authorized.has(action)) await access.authorizeOn(token, action, id);
    authorized.add(action);
  };
  let before: number;
  try {
    await authorize('events');
    before = (await deps.agent.status(id)).lastSeq;
  } catch (error) {
    // A conversation this token may start, a message starts (with default options).
    if (!(messages.length > 0 && access.mayStart(token, id) && error instanceof ConversationNotFoundError))
      throw error;
    authorizeToken(token, 'send', { conversationId: id });
    return startWith(deps, token, input, messages, beforeDelivering);
  }
  beforeDelivering(before);
  const waitedBefore = await waitingFor(deps, id);
  let delivered = await decide(deps, token, input, authorize);
  delivered = (await answerClientTools(deps, token, input, authorize)) || delivered;
  const stillWaiting = await stillWaitingFor(deps, id, waitedBefore);
  if (messages.length === 0) return { afterSeq: before, afterRun: -1, delivered, before, stillWaiting };
  // Messages taken before (this input delivered again) are not sent again, and need no right to send.
  const taken = await deps.agent.messageReceipt(id, messageIdOf(input, messages[0]!));
  if (taken)
    return { afterSeq: taken.afterSeq, afterRun: taken.afterRun, delivered: true, before, stillWaiting };
  await authorize('send');
  return { ...(await sendMessages(deps, token, input, messages)), before, stillWaiting };
}

async function waitingFor(deps: GatewayDeps, id: string): Promise<Waiting> {
  const [approvals, clientCalls] = await Promise.all([
    deps.agent.pendingApprovals(id),
    deps.agent.pendingClientToolCalls(id),
  ]);
  return { approvals, clientCalls };
}

/** What waited before this input was delivered and waits still: the input did not answer it. */
async function stillWaitingFor(deps: GatewayDeps, id: string, before: Waiting): Promise<Waiting> {
  if (before.approvals.length === 0 && before.clientCalls.length === 0) return before;
  const now = await waitingFor(deps, id);
  const approvals = new Set(before.approvals.map((approval) => approval.toolCallId));
  const clientCalls = new Set(before.clientCalls.map((call) => call.toolCallId));
  return {
    approvals: now.approvals.filter((approval) => approvals.has(approval.toolCallId)),
    clientCalls: now.clientCalls.filter((call) => clientCalls.has(call.toolCallId)),
  };
}

/**
 * A new conversation, started by its first message: nothing in it waits for the page, and it has
 * taken nothing, so nothing is asked of it before (queries on a workflow that has just started
 * wait for its first workflow task). The watch is opened as soon as it exists, before the model
 * call that message causes can begin to stream.
 */
async function startWith(
  deps: GatewayDeps,
  token: GatewayToken,
  input: RunAgentInput,
  messages: AgUiMessage[],
  beforeDelivering: (afterSeq: number) => void,
): Promise<AgUiIntake> {
  const nothingWaits: Waiting = { approvals: [], clientCalls: [] };
  const sent = await sendMessages(deps, token, input, messages, () => beforeDelivering(0));
  return { ...sent, before: 0, stillWaiting: nothingWaits };
}

/** The user messages after the page's last message of another role: what it asks now. */
function trailingUserMessages(messages: readonly AgUiMessage[]): AgUiMessage[] {
  let first = messages.length;
  while (first > 0 && messages[first - 1]!.role === 'user') first--;
  return messages.slice(first).filter((message) => textOfContent(message.content).trim().length > 0);
}

/** Sends the page's messages in order; `started`, when given, has the first start the conversation and is called once it has. */
async function sendMessages(
  deps: GatewayDeps,
  token: GatewayToken,
  input: RunAgentInput,
  messages: AgUiMessage[],
  started?: () => void,
): Promise<Pick<AgUiIntake, 'afterSeq' | 'afterRun' | 'delivered'>> {
  let first: Pick<AgUiIntake, 'afterSeq' | 'afterRun' | 'delivered'> | undefined;
  for (const [index, message] of messages.entries()) {
    const last = index === messages.length - 1;
    const clientTools = last ? clientToolsOf(input) : [];
    const sent = await deps.agent.send(input.threadId, textOfContent(message.content), {
      sender: token.name,
      messageId: messageIdOf(input, message),
      start: started !== undefined && index === 0,
      ...(clientTools.length ? { clientTools } : {}),
    });
    if (index === 0) started?.();
    first ??= { afterSeq: sent.afterSeq, afterRun: sent.afterRun, delivered: true };
  }
  return first!;
}

/**
 * The id a page's message is sent under: made from the thread and the page's own id, so the same
 * message delivered again (a retry, a reconnect, another tab) is the same message.
 */
function messageIdOf(input: RunAgentInput, message: AgUiMessage): string {
  return keyedMessageId('ag-ui', `${input.threadId}:${message.id}`);
}

/** The tools the page offers, as client tools (checked strictly when sent). */
function clientToolsOf(input: RunAgentInput): ClientTool[] {
  return (input.tools ?? []).map((tool) => ({
    name: tool.name,
    description: tool.description,
    parameters:
      typeof tool.parameters === 'object' && tool.parameters !== null && !Array.isArray(tool.parameters)
        ? (tool.parameters as Record<string, unknown>)
        : { type: 'object', properties: {} },
  }));
}

/** Decisions answering approval interrupts; true if one was taken now. */
async function decide(
  deps: GatewayDeps,
  token: GatewayToken,
  input: RunAgentInput,
  authorize: (action: GatewayAction) => Promise<void>,
): Promise<boolean> {
  const entries = (input.resume ?? []).filter((entry) => entry.status === 'resolved');
  if (entries.length === 0) return false;
  await authorize('approve');
  const id = input.threadId;
  const isPending = async (toolCallId: string) =>
    (await deps.agent.pendingApprovals(id)).some((approval) => approval.toolCallId === toolCallId);
  let taken = false;
  for (const entry of entries) {
    const toolCallId = interruptedCall(entry);
    // Decided already (this input's earlier delivery, or another door): the decision counts once.
    if (!(await isPending(toolCallId))) continue;
    const body = parseBody(AgUiDecisionSchema, entry.payload);
    try {
      await decideAs(deps, token, id, toolCallId, body);
      taken = true;
    } catch (error) {
      if (error instanceof UpdateRefusedError && !(await isPending(toolCallId))) continue;
      throw error;
    }
  }
  return taken;
}

function interruptedCall(entry: AgUiResume): string {
  const toolCallId = toolCallOfInterrupt(entry.interruptId);
  if (toolCallId === undefined)
    throw new BadRequest(`no such interrupt: ${JSON.stringify(entry.interruptId)}`);
  return toolCallId;
}

/** The page's results for its tool calls that wait for one; true if one was taken now. */
async function answerClientTools(
  deps: GatewayDeps,
  token: GatewayToken,
  input: RunAgentInput,
  authorize: (action: GatewayAction) => Promise<void>,
): Promise<boolean> {
  const results = input.messages.filter((message) => message.role === 'tool' && message.toolCallId);
  if (results.length === 0) return false;
  const waiting = new Set(
    (await deps.agent.pendingClientToolCalls(input.threadId)).map((call) => call.toolCallId),
  );
  let taken = false;
  for (const message of results) {
    if (!waiting.has(message.toolCallId!)) continue;
    await authorize('send');
    const text = textOfContent(message.content) || message.error || '';
    await deps.agent.answerClientTool(input.threadId, {
      toolCallId: message.toolCallId!,
      text: text.slice(0, MAX_CLIENT_TOOL_RESULT_CHARS),
      ...(message.error !== undefined ? { isError: true } : {}),
      by: token.name,
    });
    taken = true;
  }
  return taken;
}
