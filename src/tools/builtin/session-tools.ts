import { z } from 'zod';
import { ConversationEndedError, ConversationNotFoundError } from '../../shared/conversation-errors';
import { assertConversationId } from '../../shared/ids';
import type { Message } from '../../shared/messages';
import type { SessionDirectory } from './session-directory';
import { type AgentTool, type ToolContext, defineTool, jsonResult } from '../tool';
import { ToolError } from '../tool-error';

const DEFAULT_LISTED = 20;
const MAX_LISTED = 100;
const DEFAULT_HISTORY = 20;
const MAX_HISTORY = 100;
/** Each message's text in a history is cut here, so a page of them stays well inside a tool result. */
const HISTORY_TEXT_CHARS = 1_000;
const MAX_WAIT_S = 240;

const SessionIdSchema = z.string().trim().min(1).describe('The conversation id of the session');

/** Open sessions looked at, at most, to find those `sessions_list` may show. */
const MAX_SCANNED = 200;

/**
 * `sessions_list`, `session_status`, `sessions_history` and `sessions_send`: other conversations of
 * this runtime (on the same task queue) seen and messaged through `directory`. A conversation only
 * reaches those of its own agent and those of its own tree (the conversations above it and every
 * sub-agent below the top one): a model steered by injected text must not read or drive another
 * agent's conversations. One out of reach is reported exactly as one that does not exist.
 */
export function createSessionTools(directory: SessionDirectory): AgentTool[] {
  const reachable: Reachable = (sessionId, context) => inScope(directory, sessionId, context);
  return [
    sessionsListTool(directory, reachable),
    sessionStatusTool(directory, reachable),
    sessionsHistoryTool(directory, reachable),
    sessionsSendTool(directory, reachable),
  ] as AgentTool[];
}

/** Whether the calling conversation may see or message `sessionId` (see `inScope`). */
type Reachable = (sessionId: string, context: ToolContext) => Promise<boolean>;

/** `sessions_list`: the open sessions the caller may reach, newest first. */
function sessionsListTool(directory: SessionDirectory, reachable: Reachable) {
  return defineTool({
    name: 'sessions_list',
    label: 'List sessions',
    description:
      'List the open sessions (conversations) of this agent runtime, newest first, with their start times. Your own is marked self.',
    parameters: z.object({
      limit: z
        .number()
        .int()
        .min(1)
        .max(MAX_LISTED)
        .optional()
        .describe(`Most sessions to list (default ${DEFAULT_LISTED}, at most ${MAX_LISTED})`),
    }),
    category: 'other',
    idempotent: true,
    risk: 'low',
    async execute(_toolCallId, params, _signal, _onUpdate, context) {
      const { conversationId } = context;
      const limit = params.limit ?? DEFAULT_LISTED;
      const candidates = await directory.list(MAX_SCANNED);
      const visible = await Promise.all(
        candidates.map((session) => reachable(session.sessionId, context).catch(() => false)),
      );
      // One more than asked, to say whether there are more.
      const sessions = candidates.filter((_, index) => visible[index]).slice(0, limit + 1);
      return jsonResult({
        sessions: sessions.slice(0, limit).map((session) => ({
          ...session,
          ...(session.sessionId === conversationId ? { self: true } : {}),
        })),
        more: sessions.length > limit,
      });
    },
  });
}

/** `session_status`: a session's state, the caller's own by default. */
function sessionStatusTool(directory: SessionDirectory, reachable: Reachable) {
  return defineTool({
    name: 'session_status',
    label: 'Session status',
    description:
      'The status of a session (your own when session_id is absent): running or ended, idle or busy, runs, transcript length, queued messages, pending approvals.',
    parameters: z.object({ session_id: SessionIdSchema.optional() }),
    category: 'other',
    idempotent: true,
    risk: 'low',
    async execute(_toolCallId, params, _signal, _onUpdate, context) {
      const { conversationId } = context;
      const sessionId = params.session_id === undefined ? conversationId : validSessionId(params.session_id);
      const status = await reach(sessionId, context, reachable, () => directory.status(sessionId));
      const { conversation, ...execution } = status;
      return jsonResult({
        ...execution,
        ...(sessionId === conversationId ? { self: true } : {}),
        ...(conversation ?? {}),
      });
    },
  });
}

/** `sessions_history`: the last messages of a session's transcript, each cut. */
function sessionsHistoryTool(directory: SessionDirectory, reachable: Reachable) {
  return defineTool({
    name: 'sessions_history',
    label: 'Session history',
    description: `The last messages of a session's transcript: user messages and answers (each cut at ${HISTORY_TEXT_CHARS} characters), tool results only with include_tools.`,
    parameters: z.object({
      session_id: SessionIdSchema,
      limit: z
        .number()
        .int()
        .min(1)
        .max(MAX_HISTORY)
        .optional()
        .describe(
          `How many of the last transcript messages to read (default ${DEFAULT_HISTORY}, at most ${MAX_HISTORY})`,
        ),
      include_tools: z.boolean().optional().describe('Also show tool results (default false)'),
    }),
    category: 'other',
    idempotent: true,
    // Another conversation's words, and with include_tools its tools' output (files, command output):
    // data leaving one conversation for another asks first.
    risk: 'medium',
    async execute(_toolCallId, params, _signal, _onUpdate, context) {
      const sessionId = validSessionId(params.session_id);
      const history = await reach(sessionId, context, reachable, () =>
        directory.history(sessionId, params.limit ?? DEFAULT_HISTORY),
      );
      const messages = history.messages
        .map((message, offset) => summarise(message, history.from + offset))
        .filter((message) => params.include_tools || message.role !== 'toolResult');
      return jsonResult({ sessionId, transcriptLength: history.transcriptLength, messages });
    },
  });
}

/** `sessions_send`: a user message to another session, and with `wait_seconds` its answer. */
function sessionsSendTool(directory: SessionDirectory, reachable: Reachable) {
  return defineTool({
    name: 'sessions_send',
    label: 'Message a session',
    description: `Send a message to another open session, as a user message it will answer in its own run. It must exist already (sessions_list); a session cannot message itself. With wait_seconds, waits up to that long (at most ${MAX_WAIT_S}) for its answer.`,
    parameters: z.object({
      session_id: SessionIdSchema,
      text: z.string().trim().min(1).describe('The message'),
      wait_seconds: z
        .number()
        .min(0)
        .max(MAX_WAIT_S)
        .optional()
        .describe('Seconds to wait for the answer (default 0: return once sent)'),
    }),
    category: 'other',
    // Sending twice would make the other session answer twice: a lost attempt is not re-run.
    idempotent: false,
    // A change outside this conversation (acp risk table: medium): it starts a run, with its own
    // tools, in another session.
    risk: 'medium',
    startToCloseTimeoutMs: (MAX_WAIT_S + 30) * 1_000,
    async execute(toolCallId, params, signal, onUpdate, context) {
      const { conversationId } = context;
      const sessionId = validSessionId(params.session_id);
      if (sessionId === conversationId) {
        throw new ToolError(
          'InvalidArgs',
          'a session cannot message itself; answer in this conversation instead',
        );
      }
      const messageId = `${conversationId}:${toolCallId}`;
      const taken = await reach(sessionId, context, reachable, () =>
        directory.send(sessionId, {
          text: `[message from session ${conversationId}]\n${params.text}`,
          messageId,
          sender: `session:${conversationId}`,
        }),
      );
      const sent = { status: 'sent', sessionId, messageId };
      const waitMs = (params.wait_seconds ?? 0) * 1_000;
      if (waitMs === 0) return jsonResult(sent);
      onUpdate({ content: [{ type: 'text', text: `sent to ${sessionId}; waiting for its answer` }] });
      const waiting = AbortSignal.any([signal, AbortSignal.timeout(waitMs)]);
      const end = await directory
        .runEnd(sessionId, { ...taken, messageId }, waiting)
        .catch((error: unknown) => {
          throw sessionError(sessionId, error);
        });
      if (end.how === 'finished') {
        // Only an answered run is an answer: a refused or stopped one says so, with the provider's words.
        const { outcome, answer, refusal } = end.event;
        const status = outcome === 'answered' ? 'answered' : 'finished';
        return jsonResult({
          ...sent,
          status,
          outcome,
          answer,
          ...(refusal !== undefined ? { refusal } : {}),
        });
      }
      if (end.how === 'conversation_ended') {
        return jsonResult({
          ...sent,
          note: `session ${sessionId} ended (${end.executionStatus.toLowerCase()}) without answering`,
        });
      }
      // Interrupted or out of time: the message was sent all the same, and the model should know.
      return jsonResult({
        ...sent,
        note: `no answer yet${signal.aborted ? '' : ` after ${params.wait_seconds} s`}; sessions_history shows it once it comes`,
      });
    },
  });
}

function validSessionId(sessionId: string): string {
  try {
    return assertConversationId(sessionId);
  } catch (error) {
    throw new ToolError('InvalidArgs', (error as Error).message);
  }
}

/**
 * Whether the caller may reach `sessionId`: a conversation of its own tree (the same conversation
 * at the top, which each conversation knows from Temporal's parent links, never from a client), or
 * a running conversation of the same agent.
 */
async function inScope(
  directory: SessionDirectory,
  sessionId: string,
  context: ToolContext,
): Promise<boolean> {
  const root = context.ancestors?.[0] ?? context.conversationId;
  if (sessionId === root) return true;
  const identity = await directory.identityOf(sessionId);
  return identity.root === root || identity.agentId === context.agentId;
}

/** The directory's "no such session" and "it has ended" as errors the model reads; out of reach is "no such session". */
async function reach<T>(
  sessionId: string,
  context: ToolContext,
  reachable: Reachable,
  call: () => Promise<T>,
): Promise<T> {
  try {
    if (!(await reachable(sessionId, context))) throw new ConversationNotFoundError(sessionId);
    return await call();
  } catch (error) {
    throw sessionError(sessionId, error);
  }
}

/** "No such session" and "it has ended" as errors the model reads; anything else as it is. */
function sessionError(sessionId: string, error: unknown): unknown {
  if (error instanceof ConversationNotFoundError) {
    return new ToolError('FileNotFound', `no session ${sessionId}; sessions_list shows the open ones`);
  }
  if (error instanceof ConversationEndedError) {
    return new ToolError('ExecutionFailed', `session ${sessionId} has ended (${error.how})`);
  }
  return error;
}

interface MessageSummary {
  index: number;
  role: Message['role'];
  text: string;
  toolCalls?: string[];
  toolName?: string;
  isError?: boolean;
}

function summarise(message: Message, index: number): MessageSummary {
  const cut = (text: string) =>
    text.length > HISTORY_TEXT_CHARS
      ? `${text.slice(0, HISTORY_TEXT_CHARS)}… [${text.length} characters]`
      : text;
  switch (message.role) {
    case 'user':
      return { index, role: 'user', text: cut(message.content) };
    case 'assistant': {
      const text = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
      const toolCalls = message.content.flatMap((block) => (block.type === 'toolCall' ? [block.name] : []));
      return { index, role: 'assistant', text: cut(text), ...(toolCalls.length ? { toolCalls } : {}) };
    }
    case 'toolResult':
      return {
        index,
        role: 'toolResult',
        toolName: message.toolName,
        isError: message.isError,
        text: cut(
          message.content
            .map((block) => (block.type === 'text' ? block.text : `[image: ${block.mimeType}]`))
            .join('\n'),
        ),
      };
  }
}
