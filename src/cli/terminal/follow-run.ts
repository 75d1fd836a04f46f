import type { AgentEvent } from '../../shared/events';
import type { AgentClient, RunToFollow } from '../../client/agent-client';
import type { RunEnd } from '../../client/run-end';
import { eventLine } from '../../client/event-line';
import { approveCommandLine } from '../approval-choices';
import { log } from '../cleanups';
import { LiveLine } from './live-line';
import { RunActivity } from './run-activity';
import { StreamedText } from './streamed-text';
import { colourWanted, styledLine } from './style';
import { TerminalApprovals } from './approvals';
import { currentUserName } from '../user-name';
import { printable } from '../../shared/printable-text';

export interface FollowRunOptions {
  agent: AgentClient;
  /** The run shown to its end (`agent.followRun`), from its `afterSeq` on. */
  run: RunToFollow;
  /** Every run until the conversation ends instead (`watch --until-ended`). */
  untilEnded?: boolean;
  /** One JSON event per line on stdout instead of lines for people on stderr; never asks. */
  json: boolean;
  /** Logged once if nothing at all happens for a while: nothing may be running the conversation. */
  quietHint?: { afterMs: number; text: string };
}

/** How following ended (undefined after `untilEnded`), and whether the answer is already on stdout. */
export interface FollowedRun {
  end: RunEnd | undefined;
  answerShown: boolean;
}

/**
 * Shows a conversation's events and tool progress until the run ends (returning how) or, with
 * `untilEnded`, until the conversation ends. On a terminal the model's words stream to stdout as they come, and a live
 * line on stderr says what is happening meanwhile; elsewhere progress is plain lines on stderr and
 * the answer waits for the end. A tool call that needs approval is asked about at the terminal
 * when stdin is one; otherwise the command that decides it is printed, and following goes on while
 * someone else decides.
 */
export async function followRun(options: FollowRunOptions): Promise<FollowedRun> {
  const { agent } = options;
  const { conversationId, afterSeq } = options.run;
  const approvals =
    !options.json && process.stdin.isTTY
      ? new TerminalApprovals(agent, conversationId, currentUserName())
      : undefined;
  const quietHint =
    options.quietHint && setTimeout(() => log(options.quietHint!.text), options.quietHint.afterMs);
  const live = options.json ? undefined : new LiveLine(process.stderr);
  const colour = colourWanted(process.stderr);
  const print = (text: string) => {
    const line = printable(text);
    if (live) live.print(colour ? styledLine(line) : line);
    else log(line);
  };
  const text = !options.json && process.stdout.isTTY ? new StreamedText(process.stdout, live) : undefined;
  const activity = new RunActivity();
  const events: AsyncGenerator<AgentEvent, RunEnd | void> = options.untilEnded
    ? agent.watch(conversationId, { afterSeq })
    : agent.followRun(options.run);
  try {
    let answerShown = false;
    let next = await events.next();
    for (; !next.done; next = await events.next()) {
      const event = next.value;
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
      answerShown = event.type === 'run_finished' && text !== undefined && text.finish(event);
    }
    const end = next.value ?? undefined;
    if (end?.how === 'finished' && end.from === 'result') {
      // No worker answers for the ended conversation: its last events go unseen, and its result says how the run ended.
      text?.end();
      if (options.json) process.stdout.write(`${JSON.stringify(end.event)}\n`);
      else print(`conversation ${conversationId} has ended; how the run ended comes from its result`);
      return { end, answerShown: false };
    }
    if (end?.how === 'finished') return { end, answerShown };
    text?.end();
    // The conversation closed before the run finished: say why when it failed.
    const failure =
      end?.how === 'conversation_ended'
        ? end.failure
        : await agent.failureOf(conversationId).catch(() => undefined);
    if (failure) print(`! conversation ${conversationId} failed: ${failure}`);
    return { end, answerShown: false };
  } finally {
    await events.return(undefined);
    clearTimeout(quietHint);
    live?.close();
    approvals?.close();
  }
}

/** Prints a finished run's answer (stdout) or why there is none (stderr); the exit code: 0 answered, 1 not. */
export function reportRunEnd(conversationId: string, followed: FollowedRun, json: boolean): number {
  if (followed.end?.how !== 'finished') {
    log(`conversation ${conversationId} ended before the run finished`);
    return 1;
  }
  const { event } = followed.end;
  if (event.outcome === 'answered') {
    if (!json && !followed.answerShown) process.stdout.write(`${printable(event.answer)}\n`);
    return 0;
  }
  if (!json) log(noAnswerWords(event));
  return 1;
}

/** Why a finished run has no answer, as the terminal says it. */
function noAnswerWords(event: Extract<AgentEvent, { type: 'run_finished' }>): string {
  switch (event.outcome) {
    case 'aborted':
      return 'run aborted; the conversation takes the next message';
    case 'budget_exhausted':
      return 'run stopped at its budget (see above); the conversation takes the next message';
    case 'refused':
      return `the model's provider refused to answer${event.refusal ? `: ${printable(event.refusal)}` : ' (it gave no reason)'}; the conversation takes the next message`;
    default:
      return `run ended without an answer (${event.outcome}); see the error above`;
  }
}

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
