import type { AgentEvent } from '../../shared/events';
import type { AgentClient } from '../../runtime/agent-client';
import { renderProgress } from '../../runtime/render-progress';
import { approveCommandLine } from './approval-choices';
import { log } from './cleanups';
import { TerminalApprovals } from './terminal-approvals';
import { currentUserName } from './user-name';

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

/**
 * Shows a conversation's events and tool progress until `until` matches (returning that event) or
 * the conversation ends (returning undefined). A tool call that needs approval is asked about at
 * the terminal when stdin is one; otherwise the command that decides it is printed, and following
 * goes on while someone else decides.
 */
export async function followRun(options: FollowRunOptions): Promise<AgentEvent | undefined> {
  const { agent, conversationId } = options;
  const approvals =
    !options.json && process.stdin.isTTY
      ? new TerminalApprovals(agent, conversationId, currentUserName())
      : undefined;
  const quietHint =
    options.quietHint && setTimeout(() => log(options.quietHint!.text), options.quietHint.afterMs);
  try {
    for await (const event of agent.watch(conversationId, { afterSeq: options.afterSeq })) {
      clearTimeout(quietHint);
      if (event.type === 'approval_decided') approvals?.decided(event.toolCallId);
      if (options.json) process.stdout.write(`${JSON.stringify(event)}\n`);
      else {
        const line = renderProgress(event);
        if (line) log(line);
      }
      if (event.type === 'approval_requested') {
        if (approvals) approvals.requested(event);
        else
          log(
            `  to decide: ${approveCommandLine(conversationId, event.toolCallId)} [--always] [--reject] [--reason TEXT]`,
          );
      }
      if (options.until(event)) return event;
    }
    return undefined;
  } finally {
    clearTimeout(quietHint);
    approvals?.close();
  }
}

/** Prints a finished run's answer (stdout) or why there is none (stderr); the exit code: 0 answered, 1 not. */
export function reportRunEnd(conversationId: string, event: AgentEvent | undefined, json: boolean): number {
  if (event?.type !== 'run_finished') {
    log(`conversation ${conversationId} ended before the run finished`);
    return 1;
  }
  if (event.outcome === 'answered') {
    if (!json) process.stdout.write(`${event.answer}\n`);
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
