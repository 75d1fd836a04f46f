import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import {
  type AgentApp,
  type AgentContext,
  type CancelNotification,
  type ContentBlock,
  type InitializeRequest,
  type InitializeResponse,
  type LoadSessionRequest,
  type LoadSessionResponse,
  type NewSessionRequest,
  type NewSessionResponse,
  PROTOCOL_VERSION,
  type PromptRequest,
  type PromptResponse,
  RequestError,
  type SessionModeState,
  type SetSessionModeRequest,
  type SetSessionModeResponse,
  type McpServer,
  type SessionNotification,
  agent as acpAgent,
  methods,
} from '@agentclientprotocol/sdk';
import type { AgentClient } from '../client/agent-client';
import { ConversationNotFoundError } from '../shared/conversation-errors';
import type { ImageContent } from '../shared/content';
import { type ApprovalModeInput, MAX_MESSAGE_IMAGES } from '../shared/conversation-api';
import type { McpServerConfig } from '../shared/mcp-config';
import type { AgentEvent } from '../shared/events';
import type { Message } from '../shared/messages';
import { SessionFollower, promptResponseOf, stopReasonOf } from './session-follower';
import { toolCallEnd } from './tool-call-view';

export interface AcpAgentDeps {
  agent: AgentClient;
  /** Who decisions and messages from the editor are recorded as. */
  user: string;
  version: string;
  /** Lines for people: stderr, never stdout (which carries the protocol). */
  log: (line: string) => void;
  /** Where the worker in this process lets workspaces be, so a session elsewhere is refused at once. */
  workspaceRoots?: readonly string[];
  /** The worker in this process, taking the MCP servers sessions name; absent with remote workers. */
  mcpServers?: { add(servers: Record<string, McpServerConfig>): string[] };
}

type SessionUpdate = SessionNotification['update'];
type ApprovalModeId = ApprovalModeInput['mode'];

interface AcpSession {
  /** The conversation's id: a session is one conversation, so an editor can load it again by this id. */
  id: string;
  cwd: string;
  modeId: string;
  /** Whether the conversation exists yet (it starts with the first prompt, in the mode chosen by then). */
  started: boolean;
  turn?: { cancelled: boolean; messageId: string };
  /** Following a run the session was loaded into, until it ends. */
  attached?: Promise<void>;
}

const APPROVAL_MODES: SessionModeState['availableModes'] = [
  {
    id: 'default',
    name: 'Default',
    description: 'Each tool asks or not as it is set to (writes and commands ask)',
  },
  { id: 'ask', name: 'Ask every time', description: 'Every tool call waits for your approval' },
  { id: 'auto', name: 'Auto', description: 'Nothing asks, except tools set to always ask' },
];

const COMMANDS = [
  { name: 'compact', description: 'Summarise the older turns of this conversation now' },
  { name: 'end', description: 'End this conversation (it takes no more messages)' },
];

/** Messages of a loaded session's transcript replayed at the most, the newest kept. */
const MAX_REPLAYED_MESSAGES = 2_000;
/** The largest image a prompt may carry, decoded. */
const MAX_IMAGE_BYTES = 5 * 2 ** 20;
/** A replayed tool result's text is cut here. */
const REPLAYED_RESULT_CHARS = 2_000;

/**
 * The ACP agent: each editor session is a durable conversation. Prompts are user messages, the
 * run's events become session updates, approvals become permission requests, `session/cancel`
 * aborts the run, and `session/load` replays a conversation's transcript and attaches to its run in
 * progress, so closing the editor (or killing this process) loses nothing.
 */
export function createAcpAgent(deps: AcpAgentDeps): AgentApp {
  const agent: AcpAgentState = {
    deps,
    sessions: new Map(),
    approver: `${deps.user} (editor)`,
    notices: false,
  };
  return acpAgent({ name: 'durable-agent' })
    .onRequest(methods.agent.initialize, ({ params }) => initialize(agent, params))
    .onRequest(methods.agent.session.new, ({ params, client }) => newSession(agent, params, client))
    .onRequest(methods.agent.session.setMode, ({ params }) => setMode(agent, params))
    .onRequest(methods.agent.session.load, ({ params, client }) => loadSession(agent, params, client))
    .onRequest(methods.agent.session.prompt, ({ params, client }) => prompt(agent, params, client))
    .onNotification(methods.agent.session.cancel, ({ params }) => cancel(agent, params));
}

/** What every handler of one agent shares: its dependencies, its sessions, and who the editor's decisions are recorded as. */
interface AcpAgentState {
  deps: AcpAgentDeps;
  sessions: Map<string, AcpSession>;
  approver: string;
  /** Whether the editor shows notices (`session.notices`), as it said when it initialized. */
  notices: boolean;
}

function need({ sessions }: AcpAgentState, sessionId: string): AcpSession {
  const session = sessions.get(sessionId);
  if (!session) throw RequestError.resourceNotFound(sessionId);
  return session;
}

const updater = (client: AgentContext, sessionId: string) => (update: SessionUpdate) =>
  client.notify(methods.client.session.update, { sessionId, update });

function followerOf({ deps, approver, notices }: AcpAgentState, client: AgentContext, session: AcpSession) {
  return new SessionFollower({
    agent: deps.agent,
    notices,
    sessionId: session.id,
    cwd: session.cwd,
    approver,
    log: deps.log,
    readText: (file) => readFile(file, 'utf8').catch(() => null),
    link: {
      update: updater(client, session.id),
      requestPermission: (request, signal) =>
        client.request(methods.client.session.requestPermission, request, { cancellationSignal: signal }),
    },
  });
}

const modes = (session: AcpSession): SessionModeState => ({
  currentModeId: session.modeId,
  availableModes: APPROVAL_MODES,
});

const announceCommands = (client: AgentContext, sessionId: string) =>
  updater(client, sessionId)({ sessionUpdate: 'available_commands_update', availableCommands: COMMANDS });

function initialize(agent: AcpAgentState, params: InitializeRequest): InitializeResponse {
  const { deps } = agent;
  agent.notices = Boolean(params.clientCapabilities?.session?.notices);
  return {
    protocolVersion: PROTOCOL_VERSION,
    agentCapabilities: {
      loadSession: true,
      promptCapabilities: { image: true, audio: false, embeddedContext: true },
      mcpCapabilities: { http: Boolean(deps.mcpServers), sse: false },
    },
    authMethods: [],
    agentInfo: { name: 'durable-agent', title: 'durable-agent', version: deps.version },
  };
}

async function newSession(
  { deps, sessions }: AcpAgentState,
  params: NewSessionRequest,
  client: AgentContext,
): Promise<NewSessionResponse> {
  assertAbsolute(params.cwd);
  assertWithinRoots(params.cwd, deps.workspaceRoots);
  useMcpServers(deps, params.mcpServers);
  const session: AcpSession = {
    id: `acp-${randomUUID()}`,
    cwd: params.cwd,
    modeId: 'default',
    started: false,
  };
  sessions.set(session.id, session);
  setImmediate(() => void announceCommands(client, session.id).catch(() => undefined));
  return { sessionId: session.id, modes: modes(session) };
}

async function setMode(agent: AcpAgentState, params: SetSessionModeRequest): Promise<SetSessionModeResponse> {
  const { deps, approver } = agent;
  const session = need(agent, params.sessionId);
  const mode = APPROVAL_MODES.find((candidate) => candidate.id === params.modeId);
  if (!mode) throw RequestError.invalidParams({ modeId: params.modeId }, `unknown mode ${params.modeId}`);
  // Before the first prompt the mode is one of the options the conversation starts with.
  if (session.started) {
    await deps.agent.setApprovalMode(session.id, { mode: params.modeId as ApprovalModeId, by: approver });
  }
  session.modeId = mode.id;
  return {};
}

async function loadSession(
  agent: AcpAgentState,
  params: LoadSessionRequest,
  client: AgentContext,
): Promise<LoadSessionResponse> {
  const { deps, sessions } = agent;
  assertAbsolute(params.cwd);
  useMcpServers(deps, params.mcpServers);
  const execution = await deps.agent.execution(params.sessionId).catch((error: unknown) => {
    if (error instanceof ConversationNotFoundError) throw RequestError.resourceNotFound(params.sessionId);
    throw error;
  });
  const approvalMode =
    (await deps.agent.status(params.sessionId).catch(() => undefined))?.approvalMode ?? 'default';
  const session: AcpSession = {
    id: params.sessionId,
    cwd: params.cwd,
    modeId: approvalMode,
    started: true,
  };
  sessions.set(session.id, session);
  const follower = followerOf(agent, client, session);
  const update = updater(client, session.id);
  // The status before the transcript: a run that ends while the transcript is read is then
  // still followed to its end (read the other way round, its end was missed and never shown).
  const status = execution.executionStatus === 'RUNNING' ? await deps.agent.status(session.id) : undefined;
  const { messages } = await deps.agent.transcriptTail(session.id, MAX_REPLAYED_MESSAGES);
  for (const replayed of replayUpdates(messages, follower)) await update(replayed);
  await announceCommands(client, session.id);
  if (status?.status === 'running') session.attached = attach(session, follower, status, update, deps.log);
  return { modes: modes(session) };
}

async function prompt(
  agent: AcpAgentState,
  params: PromptRequest,
  client: AgentContext,
): Promise<PromptResponse> {
  const { deps, approver } = agent;
  const session = need(agent, params.sessionId);
  if (session.turn) throw RequestError.invalidRequest({}, 'a prompt is already running in this session');
  await session.attached;
  const { text, images } = promptOf(params.prompt);
  const update = updater(client, session.id);
  const command = /^\/(\w+)\s*$/.exec(text.trim())?.[1];
  if (command === 'compact' && session.started) {
    const receipt = await deps.agent.compact(session.id);
    await update(agentText(`Compacted: ${JSON.stringify(receipt)}`));
    return { stopReason: 'end_turn' };
  }
  if (command === 'end' && session.started) {
    await deps.agent.end(session.id, 'ended from the editor');
    await update(agentText('This conversation is ending; it takes no more messages.'));
    return { stopReason: 'end_turn' };
  }
  const turn = { cancelled: false, messageId: randomUUID() };
  session.turn = turn;
  try {
    const sent = await deps.agent.send(session.id, text, {
      messageId: turn.messageId,
      sender: deps.user,
      images,
      ...(session.started ? {} : { options: startOptions(session) }),
    });
    session.started = true;
    const end = await followerOf(agent, client, session).follow(sent, (event) => {
      // A cancel that came before the run started applies as soon as it does.
      if (turn.cancelled && event.type === 'run_started' && event.messageIds.includes(turn.messageId)) {
        void abortRun(deps, session, approver);
      }
    });
    if (end.how !== 'finished') {
      const why = end.how === 'conversation_ended' && end.failure ? `: ${end.failure}` : '';
      throw RequestError.internalError({}, `conversation ${session.id} ended before answering${why}`);
    }
    if (turn.cancelled) return { stopReason: 'cancelled' };
    if (end.event.outcome === 'answered' && (await refused(deps.agent, session.id)))
      return { stopReason: 'refusal' };
    return promptResponseOf(end.event);
  } finally {
    session.turn = undefined;
  }
}

async function cancel(
  { deps, sessions, approver }: AcpAgentState,
  params: CancelNotification,
): Promise<void> {
  const session = sessions.get(params.sessionId);
  if (!session?.turn) return;
  session.turn.cancelled = true;
  await abortRun(deps, session, approver);
}

/** Follows the run a loaded session found in progress to its end, then says how it ended. */
async function attach(
  session: AcpSession,
  follower: SessionFollower,
  status: { runCount: number; lastSeq: number },
  update: (update: SessionUpdate) => Promise<void>,
  log: (line: string) => void,
): Promise<void> {
  const pending = follower.follow({ afterSeq: status.lastSeq, run: status.runCount });
  // Approvals asked before this process looked are asked again (a failure to ask only loses the question).
  const asked = follower.askPending().catch((error: Error) => log(`! could not ask again: ${error.message}`));
  const followed = await pending.catch(() => undefined);
  await asked;
  if (followed?.how !== 'finished') return;
  const end = followed.event;
  await update({
    sessionUpdate: 'session_info_update',
    updatedAt: new Date(end.at).toISOString(),
    _meta: {
      'durable-agent/runFinished': {
        run: end.run,
        outcome: end.outcome,
        stopReason: runStopReason(end),
        ...(end.refusal !== undefined ? { refusal: end.refusal } : {}),
      },
    },
  }).catch(() => undefined);
  session.attached = undefined;
}

function runStopReason(end: Extract<AgentEvent, { type: 'run_finished' }>): string {
  try {
    return stopReasonOf(end);
  } catch {
    return 'error';
  }
}

/** Whether the model's last answer was stopped by its provider's content filter. */
async function refused(agent: AgentClient, conversationId: string): Promise<boolean> {
  const { messages } = await agent
    .transcriptTail(conversationId, 1)
    .catch(() => ({ messages: [] as Message[] }));
  const last = messages.at(-1);
  return last?.role === 'assistant' && last.stopReason === 'contentFilter';
}

async function abortRun(deps: AcpAgentDeps, session: AcpSession, by: string): Promise<void> {
  // Refused when no run is in progress yet: the follower aborts it once it starts.
  await deps.agent.abort(session.id, { reason: 'cancelled in the editor', by }).catch(() => undefined);
}

/** The transcript as the updates an editor would have seen, tool calls made known to the follower. */
function* replayUpdates(messages: Message[], follower: SessionFollower): Generator<SessionUpdate> {
  const results = new Map(
    messages.flatMap((message) =>
      message.role === 'toolResult' ? [[message.toolCallId, message] as const] : [],
    ),
  );
  for (const message of messages) {
    if (message.role === 'user') {
      yield { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: message.content } };
      for (const image of message.images ?? []) {
        yield {
          sessionUpdate: 'user_message_chunk',
          content: { type: 'image', data: image.data, mimeType: image.mimeType },
        };
      }
    } else if (message.role === 'assistant') {
      for (const part of message.content) {
        if (part.type === 'text') {
          if (part.text) yield agentText(part.text);
          continue;
        }
        if (part.type === 'thinking') continue; // not the answer, and not replayed
        const view = follower.remember(part.id, part.name, part.arguments);
        const result = results.get(part.id);
        const status = result === undefined ? 'in_progress' : toolCallEnd(result).status;
        const failed = status === 'failed';
        const text =
          result?.content.flatMap((item) => (item.type === 'text' ? [item.text] : [])).join('\n') ?? '';
        yield {
          sessionUpdate: 'tool_call',
          toolCallId: part.id,
          title: view.title,
          kind: view.kind,
          status,
          locations: view.locations,
          content: [
            ...(failed ? [] : view.diffs),
            ...(text
              ? [
                  {
                    type: 'content' as const,
                    content: { type: 'text' as const, text: text.slice(0, REPLAYED_RESULT_CHARS) },
                  },
                ]
              : []),
          ],
        };
      }
    }
  }
}

function agentText(text: string): SessionUpdate {
  return { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } };
}

/** A prompt's blocks as one user message: text as it is, embedded files quoted, links named, images attached. */
export function promptOf(blocks: ContentBlock[]): { text: string; images: ImageContent[] } {
  const images: ImageContent[] = [];
  const parts = blocks.flatMap((block): string[] => {
    switch (block.type) {
      case 'text':
        return [block.text];
      case 'image':
        if ((block.data.length * 3) / 4 > MAX_IMAGE_BYTES) {
          throw RequestError.invalidParams({}, `an image is over ${MAX_IMAGE_BYTES / 2 ** 20} MB`);
        }
        images.push({ type: 'image', data: block.data, mimeType: block.mimeType });
        return [];
      case 'resource':
        return [
          'text' in block.resource
            ? `Contents of ${block.resource.uri}:\n\`\`\`\n${block.resource.text}\n\`\`\``
            : `(attached binary ${block.resource.uri}, not shown)`,
        ];
      case 'resource_link':
        return [`[${block.name}](${block.uri})`];
      default:
        return [`(attached ${block.type}, not supported)`];
    }
  });
  if (images.length > MAX_MESSAGE_IMAGES) {
    throw RequestError.invalidParams({}, `at most ${MAX_MESSAGE_IMAGES} images go with one prompt`);
  }
  const text = parts.join('\n\n').trim() || (images.length ? '(see the attached image)' : '');
  if (!text) throw RequestError.invalidParams({}, 'the prompt has no text');
  return { text, images };
}

function startOptions(session: AcpSession) {
  return {
    workspace: session.cwd,
    ...(session.modeId === 'default' ? {} : { approval: { mode: session.modeId as 'ask' | 'auto' } }),
  };
}

function assertWithinRoots(cwd: string, roots: readonly string[] | undefined): void {
  if (!roots) return;
  const inside = roots.some((root) => {
    const relative = path.relative(root, cwd);
    return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
  });
  if (!inside) {
    throw RequestError.invalidParams(
      { cwd, workspaceRoots: roots },
      `${cwd} is outside the directories this agent works in (${roots.join(', ')}); set AGENT_WORKSPACE_ROOTS to allow it`,
    );
  }
}

function assertAbsolute(cwd: string): void {
  if (!path.isAbsolute(cwd)) throw RequestError.invalidParams({ cwd }, 'cwd must be an absolute path');
}

/** Hands the session's MCP servers to the worker in this process, or says why they are not used. */
function useMcpServers(deps: AcpAgentDeps, servers: McpServer[]): void {
  if (!servers.length) return;
  if (!deps.mcpServers) {
    deps.log(
      `⚠ the editor named ${servers.length} MCP server(s); with --no-worker they are not started: configure them for the workers (DURABLE_AGENT_MCP_CONFIG)`,
    );
    return;
  }
  const configs: Record<string, McpServerConfig> = {};
  for (const server of servers) {
    const name = server.name.replace(/[^a-zA-Z0-9-]+/g, '-').replace(/^-+|-+$/g, '') || 'editor';
    if ('url' in server) {
      if (server.type === 'sse') {
        deps.log(
          `⚠ MCP server ${server.name}: SSE servers are not supported, only stdio and streamable HTTP`,
        );
        continue;
      }
      configs[name] = {
        url: server.url,
        headers: Object.fromEntries(server.headers.map((h) => [h.name, h.value])),
      };
    } else {
      // The SDK's stable schema knows stdio, HTTP and SSE servers only: it refuses any other kind
      // (the unstable ACP-transport servers, which the capabilities do not offer) before this.
      configs[name] = {
        command: server.command,
        args: server.args,
        env: Object.fromEntries(server.env.map((variable) => [variable.name, variable.value])),
      };
    }
  }
  const names = deps.mcpServers.add(configs);
  if (names.length)
    deps.log(`MCP servers from the editor: ${names.join(', ')} (their tools are named SERVER__TOOL)`);
}
