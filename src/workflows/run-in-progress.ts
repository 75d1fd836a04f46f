import { ActivityFailure, ApplicationFailure, isCancellation } from '@temporalio/workflow';
import type { ClientTool } from '../shared/client-tools';
import { EVENT_TEXT_PREVIEW_CHARS } from '../shared/constants';
import type { RunFinishedOutcome } from '../shared/events';
import { type AssistantMessage, type UserMessage, textOf } from '../shared/messages';
import { definedScope, type ToolCallScope } from '../shared/tool-run';
import { isOwner } from './owners';
import { RecordedToolResults } from './recorded-tools';
import { newestClientTools, withoutClientTools } from './run-client-tools';
import type { PausedRun, RunContext } from './run-context';

/**
 * One run's own state while it lasts: the messages it took, whether they all came from owners (only
 * then may `ownerOnly` tools run), who spoke last, the sub-agents it started; and how it ends, each
 * way recorded once in the event log.
 */
export class RunInProgress {
  readonly run: number;
  readonly messageIds: string[];
  /** The model call the run starts (or resumes) with. */
  readonly firstTurn: number;
  private owners: boolean;
  private sender: string | undefined;
  private subAgents: number;
  /** A rerun's recorded tool results for this run; absent when the conversation is no rerun. */
  readonly recordedTools: RecordedToolResults | undefined;
  /** What every model call of the run sends as its system prompt, settled at its start (and kept when the run is handed over). */
  systemPrompt: string | undefined;
  /** The tools the sender of its newest message offered to carry out itself (client-tools.ts); none for most runs. */
  readonly clientTools: ClientTool[];

  constructor(
    private readonly context: RunContext,
    messages: UserMessage[],
    resumed: PausedRun | undefined,
  ) {
    const { options, transcript, events } = context;
    this.run = context.run;
    this.messageIds = resumed?.messageIds ?? messages.map((message) => message.messageId);
    this.firstTurn = resumed?.iteration ?? 1;
    // A run that only subscription events started was sent by no one: an owner's run only when everyone is one.
    this.owners =
      resumed?.ownersRun ??
      (messages.length > 0
        ? messages.every((message) => isOwner(message.sender, options.owners))
        : isOwner(undefined, options.owners));
    this.sender = resumed ? resumed.senderOfRun : lastSender(messages);
    this.subAgents = resumed?.subAgentsStarted ?? 0;
    this.recordedTools = options.rerun ? new RecordedToolResults(options.rerun, this.run) : undefined;
    this.clientTools = resumed ? (resumed.clientTools ?? []) : newestClientTools(messages);
    if (!resumed) {
      transcript.append(...messages.map(withoutClientTools));
      events.record(this.run, { type: 'run_started', messageIds: this.messageIds });
    }
  }

  /** Whether every message of the run so far came from an owner. */
  get ownersRun(): boolean {
    return this.owners;
  }

  /** The latest named sender among the run's messages and steering. */
  get senderOfRun(): string | undefined {
    return this.sender;
  }

  /** Counts a sub-agent the run starts; returns how many it has started, this one included. */
  countSubAgent(): number {
    return ++this.subAgents;
  }

  /** Where this turn's tool calls happen, as each tool activity is told. */
  toolCallScope(): ToolCallScope {
    const { conversationId, options } = this.context;
    return definedScope({
      conversationId,
      workspace: options.workspace,
      agentId: options.agentId,
      execSecurity: options.execSecurity,
      ancestors: options.ancestors?.length ? options.ancestors : undefined,
      userId: this.sender,
    });
  }

  /** Steering that came in joins the transcript; a non-owner's makes the rest of the run a non-owner's. */
  applySteering(interrupted: string[]): void {
    const { control, options, transcript, events } = this.context;
    const steering = control.takeSteering();
    this.owners &&= steering.every((message) => isOwner(message.sender, options.owners));
    this.sender = lastSender(steering) ?? this.sender;
    transcript.append(...steering);
    for (const message of steering) {
      events.record(this.run, {
        type: 'steered',
        messageId: message.messageId,
        text: message.content.slice(0, EVENT_TEXT_PREVIEW_CHARS),
        interrupted,
      });
    }
  }

  /** The run as the next execution resumes it, at `turn`. */
  pausedAt(turn: number): PausedRun {
    return {
      run: this.run,
      messageIds: this.messageIds,
      iteration: turn,
      ownersRun: this.owners,
      ...(this.sender !== undefined ? { senderOfRun: this.sender } : {}),
      ...(this.subAgents ? { subAgentsStarted: this.subAgents } : {}),
      ...(this.systemPrompt !== undefined ? { systemPrompt: this.systemPrompt } : {}),
      ...(this.clientTools.length ? { clientTools: this.clientTools } : {}),
    };
  }

  finish(outcome: RunFinishedOutcome, answer = '', refusal?: string): void {
    this.context.events.record(this.run, {
      type: 'run_finished',
      messageIds: this.messageIds,
      outcome,
      answer,
      ...(refusal !== undefined ? { refusal } : {}),
      usage: this.context.budget.usageOf(this.run),
    });
  }

  /** The model's last reply ends the run: answered, or refused by its provider, with its words. */
  answered(reply: AssistantMessage): void {
    if (reply.stopReason === 'refusal') this.finish('refused', textOf(reply), reply.refusal);
    else this.finish('answered', textOf(reply));
  }

  abort(interrupted: string[]): void {
    this.context.events.record(this.run, { type: 'aborted', ...this.context.control.aborted, interrupted });
    this.finish('aborted');
  }

  /** An activity that failed for good ends the run, never the conversation; an abort ends it as aborted. */
  fail(what: string, error: unknown): void {
    const { control, events } = this.context;
    if (isCancellation(error) && control.aborted) return this.abort([]);
    if (isCancellation(error)) throw error;
    events.record(this.run, { type: 'error', message: `${what}: ${failureMessage(error)}` });
    this.finish('error');
  }
}

function lastSender(messages: UserMessage[]): string | undefined {
  return [...messages].reverse().find((message) => message.sender !== undefined)?.sender;
}

function failureMessage(error: unknown): string {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure) return cause.message;
  if (cause instanceof Error) return cause.message;
  return String(cause);
}
