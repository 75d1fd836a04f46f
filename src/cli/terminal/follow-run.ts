import type { AgentEvent } from '../../shared/events';
import type { AgentClient } from '../../client/agent-client';
import { eventLine } from '../../client/event-line';
import { approveCommandLine } from '../approval-choices';
import { log } from '../cleanups';
import { LiveLine } from './live-line';
import { RunActivity } from './run-activity';
import { StreamedText } from './streamed-text';
import { colourWanted, styledLine } from './style';
import { TerminalApprovals } from './approvals';
import { currentUserName } from '../user-name';

export interface FollowRunOptions {
  agent: AgentClient;
  conversationId: string;
  /** Events after this sequence number are shown. */
  afterSeq: number;
  /** The event that ends following, e.g. the `run_finished` of the run that took a message. */
  until: (event: AgentEvent) => boolean;
  /** One JSON event per line on stdout instead of lines for people on stderr; never asks. */
  json: boolean;
  /** Logged once if nothing at all happens for a while: nothing may be running the conversation. */
  quietHint?: { afterMs: number; text: string };
}

/** How following ended: the event that ended it (if any), and whether the answer is already on stdout. */
export interface FollowedRun {
  last: AgentEvent | undefined;
  answerShown: boolean;
}

/**
 * Shows a conversation's events and tool progress until `until` matches (returning that event) or
 * the conversation ends. On a terminal the model's words stream to stdout as they come, and a live
 * line on stderr says what is happening meanwhile; elsewhere progress is plain lines on stderr and
 * the answer waits for the end. A tool call that needs approval is asked about at the terminal
 * when stdin is one; otherwise the command that decides it is printed, and following goes on while
 * someone else decides.
 */
export async function followRun(options: FollowRunOptions): Promise<FollowedRun> {
  const { agent, conversationId } = options;
  const approvals =
    !options.json && process.stdin.isTTY
      ? new TerminalApprovals(agent, conversationId, currentUserName())
      : undefined;
  const quietHint =
    options.quietHint && setTimeout(() => log(options.quietHint!.text), options.quietHint.afterMs);
  const live = options.json ? undefined : new LiveLine(process.stderr);
  const colour = colourWanted(process.stderr);
  const print = (line: string) => (live ? live.print(colour ? styledLine(line) : line) : log(line));
  const text = !options.json && process.stdout.isTTY ? new StreamedText(process.stdout, live) : undefined;
  const activity = new RunActivity();
  try {
    for await (const event of agent.watch(conversationId, { afterSeq: options.afterSeq })) {
      clearTimeout(quietHint);
      if (event.type === 'approval_decided') approvals?.decided(event.toolCallId);
      if (options.json) process.stdout.write(`${JSON.stringify(event)}\n`);
      else if (event.type === 'model_text') text?.add(event);
      else {
        if (event.type === 'model_response' && event.toolCalls.length) text?.end();
        const line = text?.shows(event) ? undefined : eventLine(event);
        if (line) print(line);
      }
      const doing = activity.after(event);
      if (doing === undefined) live?.hide();
      else live?.show(doing);
      // While a person is asked here, the prompt has the terminal.
      if (approvals && activity.awaitingApproval) live?.pause('approval');
      else live?.resume('approval');
      const asked = approvalAsked(event, conversationId);
      if (asked?.event.type === 'approval_requested') {
        if (approvals) approvals.requested(asked.event, asked.conversationId);
        else
          print(
            `  to decide: ${approveCommandLine(asked.conversationId, asked.event.toolCallId)} [--always] [--reject] [--reason TEXT]`,
          );
      } else if (asked?.event.type === 'approval_decided' && asked.conversationId !== conversationId) {
        approvals?.decided(asked.event.toolCallId);
      }
      const answerShown = event.type === 'run_finished' && text !== undefined && text.finish(event);
      if (options.until(event)) return { last: event, answerShown };
    }
    text?.end();
    // The conversation closed before the run finished: say why when it failed.
    const failure = await agent.failureOf(conversationId).catch(() => undefined);
    if (failure) print(`! conversation ${conversationId} failed: ${failure}`);
    return { last: undefined, answerShown: false };
  } finally {
    clearTimeout(quietHint);
    live?.close();
    approvals?.close();
  }
}

/** Prints a finished run's answer (stdout) or why there is none (stderr); the exit code: 0 answered, 1 not. */
export function reportRunEnd(conversationId: string, followed: FollowedRun, json: boolean): number {
  const event = followed.last;
  if (event?.type !== 'run_finished') {
    log(`conversation ${conversationId} ended before the run finished`);
    return 1;
  }
  if (event.outcome === 'answered') {
    if (!json && !followed.answerShown) process.stdout.write(`${event.answer}\n`);
    return 0;
  }
  if (!json) {
    log(
      event.outcome === 'aborted'
        ? 'run aborted; the conversation takes the next message'
        : `run ended without an answer (${event.outcome}); see the error above`,
    );
  }
  return 1;
}

/** Ends following at the `run_finished` of the run that took this message. */
export const finishedRunOf =
  (messageId: string) =>
  (event: AgentEvent): boolean =>
    event.type === 'run_finished' && event.messageIds.includes(messageId);

type ApprovalEvent = Extract<AgentEvent, { type: 'approval_requested' | 'approval_decided' }>;

/** An approval event of the conversation followed, or of a sub-agent (carried as progress of its spawn call). */
function approvalAsked(
  event: AgentEvent,
  conversationId: string,
): { event: ApprovalEvent; conversationId: string } | undefined {
  if (event.type === 'approval_requested' || event.type === 'approval_decided')
    return { event, conversationId };
  if (event.type !== 'tool_execution_update') return undefined;
  const details = event.details as { subagent?: unknown; subagentEvent?: ApprovalEvent } | undefined;
  if (typeof details?.subagent !== 'string' || !details.subagentEvent) return undefined;
  return { event: details.subagentEvent, conversationId: details.subagent };
}
