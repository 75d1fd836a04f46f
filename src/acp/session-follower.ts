import { policySummary } from '../shared/pending-policy';
import type {
  PromptResponse,
  PermissionOption,
  RequestPermissionRequest,
  RequestPermissionResponse,
  SessionNotification,
  ToolCallContent,
} from '@agentclientprotocol/sdk';
import { BUDGET_PAUSE_TOOL, isBudgetPauseId } from '../shared/budget';
import type { AgentClient, RunToFollow } from '../client/agent-client';
import type { RunEnd } from '../client/run-end';
import type { ApprovalDecisionKind } from '../shared/approvals';
import type { AgentEvent } from '../shared/events';
import { EVENT_ARGUMENTS_CHARS } from '../shared/constants';
import { parsedArguments } from '../shared/parsed-arguments';
import { oneLine } from '../shared/one-line';
import { printable } from '../shared/printable-text';
import { modelRetryWords } from '../client/event-line';
import { type ToolCallView, toolCallEnd, toolCallView } from './tool-call-view';

type SessionUpdate = SessionNotification['update'];
type RunFinished = Extract<AgentEvent, { type: 'run_finished' }>;
type ModelRetry = Extract<AgentEvent, { type: 'model_retry' }>;

/** The model endpoint's error, as much of it as a notice shows. */
const MODEL_ERROR_CHARS = 300;

/** What the follower needs of the editor's connection; the ACP connection in production, a fake in tests. */
export interface EditorLink {
  update(update: SessionUpdate): Promise<void>;
  /** Asks for a permission; aborting `signal` withdraws the request (its answer is then ignored). */
  requestPermission(
    request: RequestPermissionRequest,
    signal: AbortSignal,
  ): Promise<RequestPermissionResponse>;
}

export interface FollowerDeps {
  agent: Pick<AgentClient, 'followRun' | 'pendingApprovals' | 'approve' | 'transcriptTail'>;
  link: EditorLink;
  sessionId: string;
  /** The session's workspace: tool paths are shown against it. */
  cwd: string;
  /** Who decisions made in the editor are recorded as. */
  approver: string;
  /** A file's text before a tool writes it whole, for the diff; null when there is none. */
  readText: (absolutePath: string) => Promise<string | null>;
  /** Told of failures the editor cannot be told about (a decision not taken); goes to stderr. */
  log: (line: string) => void;
  /**
   * The editor shows notices (it advertised `session.notices`): a model call being tried again is
   * one; otherwise it goes among the agent's thoughts, which every editor shows and which are never
   * part of the answer.
   */
  notices?: boolean;
}

const PERMISSION_OPTIONS: Array<PermissionOption & { optionId: ApprovalDecisionKind }> = [
  { optionId: 'allow_once', name: 'Allow once', kind: 'allow_once' },
  { optionId: 'allow_always', name: 'Always allow', kind: 'allow_always' },
  { optionId: 'reject_once', name: 'Reject', kind: 'reject_once' },
  { optionId: 'reject_always', name: 'Always reject', kind: 'reject_always' },
];

interface KnownCall {
  name: string;
  view: ToolCallView;
  /** A run waiting for its agent's next UTC day: only a reject answers it. */
  rejectOnly?: boolean;
}

/**
 * Turns a conversation's events into ACP session updates for one editor session: the model's text
 * as `agent_message_chunk`s, each tool call as a `tool_call` (pending while it waits for approval,
 * then in progress) with `tool_call_update`s for its progress and end; and every approval the run
 * waits for as a `session/request_permission`, withdrawn when someone decides elsewhere.
 */
export class SessionFollower {
  private readonly calls = new Map<string, KnownCall>();
  private readonly asking = new Map<string, AbortController>();
  private text: { call: string; shown: string } | undefined;
  private lastText = '';

  constructor(private readonly deps: FollowerDeps) {}

  /** Shows the session's run `run` to its end (`agent.followRun`); returns how it ended. */
  async follow(
    run: Omit<RunToFollow, 'conversationId'>,
    onEvent?: (event: AgentEvent) => void,
  ): Promise<RunEnd> {
    const events = this.deps.agent.followRun({ ...run, conversationId: this.deps.sessionId });
    try {
      for (;;) {
        const next = await events.next();
        if (next.done) {
          // Made from an ended conversation's result: what of the answer the editor has not seen yet.
          if (next.value.how === 'finished' && next.value.from === 'result')
            await this.show(next.value.event);
          return next.value;
        }
        onEvent?.(next.value);
        await this.show(next.value);
      }
    } finally {
      await events.return({ how: 'stopped' });
      for (const request of this.asking.values()) request.abort();
    }
  }

  /** A call the editor was already shown (replaying a loaded session), so its later events only update it. */
  remember(toolCallId: string, toolName: string, args: string): ToolCallView {
    const view = toolCallView(toolName, parsedArguments(args), this.deps.cwd);
    this.calls.set(toolCallId, { name: toolName, view });
    return view;
  }

  /** Asks the editor about the approvals the run already waits for (after a session is loaded). */
  async askPending(): Promise<void> {
    for (const pending of await this.deps.agent.pendingApprovals(this.deps.sessionId)) {
      if (!(await this.announce(pending.toolCallId, pending.toolName, pending.arguments, 'pending'))) {
        await this.deps.link.update({
          sessionUpdate: 'tool_call_update',
          toolCallId: pending.toolCallId,
          status: 'pending',
        });
      }
      this.ask(pending.toolCallId, pending.policy ? policySummary(pending.policy) : undefined);
    }
  }

  private async show(event: AgentEvent): Promise<void> {
    const { update } = this.deps.link;
    switch (event.type) {
      case 'model_text':
        if (this.text?.call !== event.call) this.text = { call: event.call, shown: '' };
        this.text.shown += event.text;
        await update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: event.text } });
        return;
      case 'model_response':
        this.lastText = this.text?.shown ?? '';
        this.text = undefined;
        return;
      case 'approval_requested':
        await this.announce(event.toolCallId, event.toolName, event.args, 'pending');
        this.ask(event.toolCallId, event.asks);
        return;
      case 'approval_decided':
        this.asking.get(event.toolCallId)?.abort();
        // A budget pause runs nothing afterwards: the decision is where its card in the editor ends.
        if (event.toolName === BUDGET_PAUSE_TOOL && isBudgetPauseId(event.toolCallId)) {
          await update({
            sessionUpdate: 'tool_call_update',
            toolCallId: event.toolCallId,
            status: event.decision.startsWith('allow') ? 'completed' : 'failed',
          });
        }
        return;
      case 'tool_execution_start':
        if (!(await this.announce(event.toolCallId, event.toolName, event.args, 'in_progress'))) {
          await update({
            sessionUpdate: 'tool_call_update',
            toolCallId: event.toolCallId,
            status: 'in_progress',
          });
        }
        return;
      case 'tool_execution_update': {
        const call = this.calls.get(event.toolCallId);
        const progress = event.text ?? (event.details !== undefined ? JSON.stringify(event.details) : '');
        if (!progress) return;
        await update({
          sessionUpdate: 'tool_call_update',
          toolCallId: event.toolCallId,
          status: 'in_progress',
          content: [...(call?.view.diffs ?? []), textContent(progress)],
        });
        return;
      }
      case 'tool_execution_end': {
        await this.announce(event.toolCallId, event.toolName, '{}', 'in_progress');
        const call = this.calls.get(event.toolCallId)!;
        const end = toolCallEnd(event);
        await update({
          sessionUpdate: 'tool_call_update',
          toolCallId: event.toolCallId,
          status: end.status,
          content: [
            ...(end.status === 'failed' ? [] : call.view.diffs),
            ...(event.preview ? [textContent(event.preview)] : []),
          ],
          rawOutput: {
            preview: event.preview,
            isError: event.isError,
            aborted: event.aborted ?? false,
            ...end.fields,
          },
        });
        return;
      }
      case 'model_retry':
        await update(modelRetryUpdate(event, this.deps.notices ?? false));
        return;
      case 'run_finished':
        await this.finishText(event);
        return;
      default:
        return;
    }
  }

  /** The rest of the answer, when the text streamed so far is only its beginning (or nothing); a refusal's words. */
  private async finishText(event: RunFinished): Promise<void> {
    if (event.outcome === 'refused') return this.refused(event);
    if (event.outcome !== 'answered' || !event.answer) return;
    const shown = this.text?.shown ?? this.lastText;
    const rest = event.answer.startsWith(shown) ? event.answer.slice(shown.length) : '';
    this.text = undefined;
    this.lastText = '';
    if (rest)
      await this.deps.link.update({
        sessionUpdate: 'agent_message_chunk',
        content: { type: 'text', text: rest },
      });
  }

  /** Says that the model's provider refused, in its words, after what the model wrote before (if anything). */
  private async refused(event: RunFinished): Promise<void> {
    this.text = undefined;
    this.lastText = '';
    await this.deps.link.update({
      sessionUpdate: 'agent_message_chunk',
      content: { type: 'text', text: refusalNotice(event) },
    });
  }

  /** Sends the `tool_call` the first time a call is seen; false when it had been sent before. */
  private async announce(
    toolCallId: string,
    toolName: string,
    shownArgs: string,
    status: 'pending' | 'in_progress',
  ): Promise<boolean> {
    if (this.calls.has(toolCallId)) return false;
    // Held at once, so a second event of the same call does not announce it again meanwhile.
    const call: KnownCall = { name: toolName, view: toolCallView(toolName, {}, this.deps.cwd) };
    this.calls.set(toolCallId, call);
    const args = await this.wholeArguments(toolCallId, shownArgs);
    const current = toolName === 'write' ? await this.currentText(args) : undefined;
    call.view = toolCallView(toolName, args, this.deps.cwd, current);
    if (toolName === BUDGET_PAUSE_TOOL && isBudgetPauseId(toolCallId) && args.kind === 'dailyTokens')
      call.rejectOnly = true;
    await this.deps.link.update({
      sessionUpdate: 'tool_call',
      toolCallId,
      title: call.view.title,
      kind: call.view.kind,
      status,
      locations: call.view.locations,
      content: call.view.diffs,
      rawInput: args,
    });
    return true;
  }

  /**
   * Asks the editor in the background: events go on meanwhile, and a decision made elsewhere
   * withdraws it. Under an approval policy the title says who else must agree (`asks`).
   */
  private ask(toolCallId: string, asks?: string): void {
    const call = this.calls.get(toolCallId);
    if (!call || this.asking.has(toolCallId)) return;
    const withdraw = new AbortController();
    this.asking.set(toolCallId, withdraw);
    const request: RequestPermissionRequest = {
      sessionId: this.deps.sessionId,
      toolCall: {
        toolCallId,
        title: asks ? `${call.view.title} (${asks})` : call.view.title,
        kind: call.view.kind,
        status: 'pending',
      },
      options: PERMISSION_OPTIONS.filter(
        (option) => !call.rejectOnly || option.kind.startsWith('reject'),
      ).map((option) => ({
        ...option,
        name: option.kind.endsWith('always') ? `${option.name} (${call.name})` : option.name,
      })),
    };
    void this.deps.link
      .requestPermission(request, withdraw.signal)
      .then(async (response) => {
        const { outcome } = response;
        if (withdraw.signal.aborted || outcome.outcome !== 'selected') return;
        const decision = PERMISSION_OPTIONS.find((option) => option.optionId === outcome.optionId);
        if (!decision) return;
        const pending = (await this.deps.agent.pendingApprovals(this.deps.sessionId)).find(
          (approval) => approval.toolCallId === toolCallId,
        );
        if (!pending) return;
        await this.deps.agent.approve(this.deps.sessionId, {
          toolCallId,
          decision: decision.optionId,
          by: this.deps.approver,
          argumentsSha256: pending.argumentsSha256,
        });
      })
      .catch((error: Error) => {
        if (!withdraw.signal.aborted)
          this.deps.log(`! approval of ${toolCallId} not taken: ${error.message}`);
      })
      .finally(() => this.asking.delete(toolCallId));
  }

  /** Events carry the first EVENT_ARGUMENTS_CHARS characters of the arguments: longer ones come from the transcript. */
  private async wholeArguments(toolCallId: string, shown: string): Promise<Record<string, unknown>> {
    if (shown.length < EVENT_ARGUMENTS_CHARS) return parsedArguments(shown);
    const { messages } = await this.deps.agent.transcriptTail(this.deps.sessionId, 20).catch(() => ({
      messages: [],
    }));
    for (const message of messages) {
      if (message.role !== 'assistant') continue;
      const call = message.content.find((part) => part.type === 'toolCall' && part.id === toolCallId);
      if (call?.type === 'toolCall') return parsedArguments(call.arguments);
    }
    return parsedArguments(shown);
  }

  private async currentText(args: Record<string, unknown>): Promise<string | null | undefined> {
    if (typeof args.path !== 'string') return undefined;
    const view = toolCallView('write', args, this.deps.cwd);
    return this.deps.readText(view.locations[0]!.path).catch(() => undefined);
  }
}

/**
 * A model call that failed and is tried again, for a person: as a warning notice, or as a thought.
 * The error comes from the model's endpoint, so it is made printable and bounded like other text.
 */
export function modelRetryUpdate(event: ModelRetry, notices: boolean): SessionUpdate {
  const retry = { ...event, error: printable(event.error) };
  const _meta = {
    'durable-agent/modelRetry': { attempt: event.attempt, givesUpAt: event.givesUpAt ?? null },
  };
  if (!notices) {
    return {
      sessionUpdate: 'agent_thought_chunk',
      content: { type: 'text', text: `${modelRetryWords(retry)}\n` },
      _meta,
    };
  }
  const until =
    event.givesUpAt !== undefined ? `; the run gives up at ${new Date(event.givesUpAt).toISOString()}` : '';
  return {
    sessionUpdate: 'notice',
    severity: 'warning',
    title: `The model call failed; trying again (attempt ${event.attempt})`,
    description: `${oneLine(retry.error, MODEL_ERROR_CHARS)}${until}`,
    _meta,
  };
}

function textContent(text: string): Extract<ToolCallContent, { type: 'content' }> {
  return { type: 'content', content: { type: 'text', text } };
}

/** A refused run as the editor shows it: the provider's words, set apart from the model's. */
export function refusalNotice(event: RunFinished): string {
  return `\n\n[The model's provider refused to answer${event.refusal ? `: ${event.refusal}` : '.'}]`;
}

/** How a prompt turn ended, as ACP says it, with a refusal's words in `_meta`. */
export function promptResponseOf(event: RunFinished): PromptResponse {
  return {
    stopReason: stopReasonOf(event),
    ...(event.refusal !== undefined ? { _meta: { 'durable-agent/refusal': event.refusal } } : {}),
  };
}

/** How a prompt turn ended, as ACP says it. */
export function stopReasonOf(event: RunFinished): 'end_turn' | 'refusal' | 'max_turn_requests' | 'cancelled' {
  switch (event.outcome) {
    case 'answered':
      return 'end_turn';
    case 'refused':
      return 'refusal';
    // ACP has no reason for a spending limit; the nearest is the limit on a turn's requests.
    case 'max_tool_iterations':
    case 'budget_exhausted':
      return 'max_turn_requests';
    case 'aborted':
      return 'cancelled';
    case 'error':
      throw new Error(event.answer || 'the run ended with an error; `durable-agent history` shows it');
  }
}
