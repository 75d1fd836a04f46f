import { type Interface, createInterface } from 'node:readline/promises';
import type { ApprovalDecisionKind, PendingApproval } from '../../shared/approvals';
import type { AgentEvent } from '../../shared/events';
import type { AgentClient } from '../../client/agent-client';
import {
  PROMPT_CHOICES,
  WAIT_OR_REJECT_CHOICES,
  decisionFromAnswer,
  shellWord,
  waitOrRejectFromAnswer,
} from '../approval-choices';
import { budgetPauseWords, dailyBudgetPauseWords } from '../../client/budget-words';
import { RAISE_FLAGS } from '../raise-flags';
import { log } from '../cleanups';
import { printable, withUnprintableShown } from '../../shared/printable-text';

type ApprovalRequest = Extract<AgentEvent, { type: 'approval_requested' }>;

/** A request to decide, and the conversation it waits in (the one followed, or one of its sub-agents). */
interface Asked {
  conversationId: string;
  request: ApprovalRequest;
}

/**
 * Asks the person at the terminal to decide pending approvals, one at a time, oldest first: those
 * of the conversation followed and of the sub-agents it started. A request decided elsewhere in the
 * meantime (another terminal, a service) is dropped, and its prompt withdrawn if it is showing.
 */
export class TerminalApprovals {
  private readonly queue: Asked[] = [];
  private showing?: { toolCallId: string; withdraw: AbortController; terminal: Interface };
  private working = false;
  private closed = false;

  constructor(
    private readonly agent: Pick<AgentClient, 'pendingApprovals' | 'approve'>,
    private readonly conversationId: string,
    private readonly approver: string,
    private readonly input: NodeJS.ReadableStream = process.stdin,
    private readonly output: NodeJS.WritableStream = process.stderr,
  ) {}

  /** `inConversation`: a sub-agent's id when the request waits there. */
  requested(request: ApprovalRequest, inConversation = this.conversationId): void {
    this.queue.push({ conversationId: inConversation, request });
    void this.work().catch((error: Error) => log(`! could not ask for approval: ${error.message}`));
  }

  decided(toolCallId: string): void {
    const index = this.queue.findIndex((asked) => asked.request.toolCallId === toolCallId);
    if (index !== -1) this.queue.splice(index, 1);
    if (this.showing?.toolCallId === toolCallId) this.withdrawPrompt();
  }

  close(): void {
    this.closed = true;
    this.queue.length = 0;
    if (this.showing) this.withdrawPrompt();
  }

  /** Closes the prompt at once (ending its line), so what is printed next starts on a line of its own. */
  private withdrawPrompt(): void {
    this.showing?.withdraw.abort();
    this.showing?.terminal.close();
  }

  private async work(): Promise<void> {
    if (this.working) return;
    this.working = true;
    try {
      for (let asked = this.queue.shift(); asked && !this.closed; asked = this.queue.shift()) {
        const { conversationId, request } = asked;
        // Events may be replayed from before this process started following: ask only what still waits.
        const pending = await this.agent.pendingApprovals(conversationId).catch(() => undefined);
        const approval = pending?.find((candidate) => candidate.toolCallId === request.toolCallId);
        if (pending && !approval) continue;
        // The person decides on what will run: the arguments whole, and the decision names their hash.
        if (approval) this.output.write(printable(argumentsShown(conversationId, approval)));
        const decision = await this.ask(asked, approval?.budget?.kind === 'dailyTokens');
        if (!decision) continue;
        await this.agent
          .approve(conversationId, {
            toolCallId: request.toolCallId,
            decision,
            by: this.approver,
            ...(approval?.argumentsSha256 ? { argumentsSha256: approval.argumentsSha256 } : {}),
          })
          .catch((error: Error) => log(`! approval not taken: ${error.message}`));
      }
    } finally {
      this.working = false;
    }
  }

  /**
   * The decision typed at the terminal, or undefined when the prompt was withdrawn (or, for a run
   * waiting for its agent's next day, `rejectOnly`, the person chose to let it wait).
   */
  private async ask(
    { conversationId, request }: Asked,
    rejectOnly: boolean,
  ): Promise<ApprovalDecisionKind | undefined> {
    const withdraw = new AbortController();
    // One interface per question, so the terminal is back to normal between questions.
    const terminal = createInterface({ input: this.input, output: this.output, terminal: true });
    this.showing = { toolCallId: request.toolCallId, withdraw, terminal };
    // Ctrl-C at the prompt stops the command as it would anywhere else.
    terminal.on('SIGINT', () => process.kill(process.pid, 'SIGINT'));
    try {
      const where = `${request.toolCallId}${conversationId === this.conversationId ? '' : `, sub-agent ${conversationId}`}`;
      for (;;) {
        const answer = await terminal.question(
          printable(
            rejectOnly
              ? `Stop the run (${where})? ${WAIT_OR_REJECT_CHOICES}: `
              : `Allow ${request.toolName} (${where})? ${PROMPT_CHOICES}: `,
          ),
          { signal: withdraw.signal },
        );
        if (rejectOnly) {
          const choice = waitOrRejectFromAnswer(answer);
          if (choice) return choice === 'wait' ? undefined : choice;
          this.output.write(`Please answer w or r.\n`);
          continue;
        }
        const decision = decisionFromAnswer(answer);
        if (decision) return decision;
        this.output.write(`Please answer o, a or r.\n`);
      }
    } catch (error) {
      if (withdraw.signal.aborted) return undefined;
      throw error;
    } finally {
      this.showing = undefined;
      terminal.close();
    }
  }
}

/** Arguments shown whole up to this many characters; longer ones by their start, length and hash. */
const SHOWN_ARGUMENTS_CHARS = 4_000;

/** The arguments a pending call will run with, as the terminal shows them before asking. */
export function argumentsShown(conversationId: string, approval: PendingApproval): string {
  if (approval.budget) {
    const { reached, defaultRaise } = budgetPauseWords(approval.budget);
    if (approval.budget.kind === 'dailyTokens')
      return `  run ${approval.run} reached its ${reached}; ${dailyBudgetPauseWords(approval.budget)}\n`;
    return `  run ${approval.run} reached its ${reached}; allowing gives it ${defaultRaise} (or decide with durable-agent approve ${shellWord(conversationId)} ${shellWord(approval.toolCallId)} ${RAISE_FLAGS[approval.budget.kind]}), rejecting stops the run\n`;
  }
  // What runs is shown as it is: a control character or escape in it is written out, not dropped.
  const { arguments: raw, argumentsLength = raw.length, argumentsSha256 } = approval;
  const text = withUnprintableShown(raw);
  const hash = argumentsSha256 ? ` SHA-256 ${argumentsSha256}` : '';
  if (argumentsLength <= SHOWN_ARGUMENTS_CHARS && !approval.argumentsTruncated) {
    return `  arguments (${argumentsLength} characters${hash ? `,${hash}` : ''}):\n${text}\n`;
  }
  return `  arguments: the first ${SHOWN_ARGUMENTS_CHARS} of ${argumentsLength} characters${hash ? `,${hash}` : ''}; all of them: durable-agent status ${shellWord(conversationId)} --json\n${text.slice(0, SHOWN_ARGUMENTS_CHARS)}\n  [… ${argumentsLength - SHOWN_ARGUMENTS_CHARS} more characters not shown]\n`;
}
