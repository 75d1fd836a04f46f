import { oneLine } from '../shared/one-line';
import { BUDGET_PAUSE_TOOL } from '../shared/budget';
import { budgetExhaustedWords, budgetPauseOf, budgetPauseWords, dailyBudgetPauseWords } from './budget-words';
import type { ApprovalDecisionKind } from '../shared/approvals';
import type { AgentEvent } from '../shared/events';
import { type ToolOutcomeStatus, outcomeFieldsOf } from '../shared/tool-outcome';

const DECISION_WORDS: Record<ApprovalDecisionKind, string> = {
  allow_once: 'allowed once',
  allow_always: 'allowed always',
  reject_once: 'rejected',
  reject_always: 'rejected always',
};

/** How a tool call ended, at a glance. */
const TOOL_END_MARKS: Record<ToolOutcomeStatus, string> = { ok: '✓', error: '✗', blocked: '✗', aborted: '⊘' };

const interruptedTools = (ids: string[]) =>
  ids.length ? ` (interrupted ${ids.length} tool${ids.length === 1 ? '' : 's'})` : '';

/** `the model call failed (…); trying again: attempt 3, until …`: a retry in words, the error cut to one line. */
export function modelRetryWords(
  event: Pick<Extract<AgentEvent, { type: 'model_retry' }>, 'attempt' | 'error' | 'givesUpAt'>,
): string {
  const until = event.givesUpAt !== undefined ? `, until ${new Date(event.givesUpAt).toISOString()}` : '';
  return `the model call failed (${oneLine(event.error, 160)}); trying again: attempt ${event.attempt}${until}`;
}

/** One line of text for an event worth seeing (a terminal shows them, a sub-agent's events become its parent's progress), or undefined for nothing. */
export function eventLine(event: AgentEvent): string | undefined {
  switch (event.type) {
    case 'run_started':
      return undefined;
    case 'model_response':
      return event.toolCalls.length && event.text ? `· ${oneLine(event.text, 160)}` : undefined;
    case 'tool_execution_start':
      return `→ ${event.toolName} ${oneLine(event.args, 120)}`;
    case 'tool_execution_update': {
      const text = event.text ? oneLine(event.text.split('\n').filter(Boolean).pop() ?? '', 160) : '';
      const details = event.details !== undefined ? oneLine(JSON.stringify(event.details), 80) : '';
      const shown = [text, details].filter(Boolean).join(' ');
      return shown ? `  … ${event.toolName} ${shown}` : undefined;
    }
    case 'tool_execution_end': {
      const { status } = outcomeFieldsOf(event);
      return `${TOOL_END_MARKS[status]} ${event.toolName}${status === 'aborted' ? ' (interrupted)' : ''} ${oneLine(event.preview, 120)}`;
    }
    case 'approval_requested': {
      const pause = event.toolName === BUDGET_PAUSE_TOOL ? budgetPauseOf(event) : undefined;
      if (pause) {
        const { reached, defaultRaise } = budgetPauseWords(pause);
        if (pause.kind === 'dailyTokens')
          return `? run ${event.run} reached its ${reached}; ${event.toolCallId} waits: ${dailyBudgetPauseWords(pause)}`;
        return `? run ${event.run} reached its ${reached}; ${event.toolCallId} waits: allowing gives ${defaultRaise}, rejecting stops the run`;
      }
      return `? ${event.toolName} needs approval (risk ${event.risk}, call ${event.toolCallId}): ${oneLine(event.args, 120)}${event.asks ? `\n  ${event.asks}` : ''}`;
    }
    case 'approval_decided':
      return `${event.decision.startsWith('allow') ? '✓' : '✗'} ${event.toolName} ${DECISION_WORDS[event.decision]} by ${event.by}${event.reason ? `: ${oneLine(event.reason, 120)}` : ''}`;
    case 'approval_counted':
      return `${event.decision.startsWith('allow') ? '·' : '✗'} ${event.toolName} ${DECISION_WORDS[event.decision]} by ${event.by}: ${event.progress}`;
    case 'approval_escalated':
      return `⇡ ${event.toolName} (call ${event.toolCallId}) escalated to ${event.to}: ${event.quorum} of ${event.members.join(', ')} may decide now`;
    case 'steered':
      return `↪ steered${interruptedTools(event.interrupted)}: ${oneLine(event.text, 120)}`;
    case 'aborted':
      return `■ aborted${event.by ? ` by ${event.by}` : ''}${interruptedTools(event.interrupted)}${event.reason ? `: ${oneLine(event.reason, 120)}` : ''}`;
    case 'run_finished':
      return undefined;
    case 'budget_exhausted':
      return `■ ${budgetExhaustedWords(event)}`;
    case 'error':
      return `! ${event.message}`;
    case 'warning':
      return `⚠ ${event.message}`;
    case 'subagent_started':
      return `⇉ sub-agent ${event.conversationId}: ${oneLine(event.task, 120)}`;
    case 'subscription_event':
      return `⚡ event from ${event.toolName} (${event.toolCallId})${event.final ? ', its last' : ''}: ${oneLine(event.text, 120)}`;
    case 'user_choice_requested':
      return `? ${event.toolName} asks (call ${event.toolCallId}): ${oneLine(event.prompt, 120)} ${event.choices
        .map((choice, index) => `[${index}${index === event.default ? '*' : ''}] ${oneLine(choice, 40)}`)
        .join(' ')}`;
    case 'user_choice_answered':
      return `✓ choice ${event.selected} sent for ${event.toolCallId}${event.by ? ` by ${event.by}` : ''}`;
    case 'oauth_requested':
      return `🔑 ${event.toolName} needs authorisation (call ${event.toolCallId}): open ${event.authUrl}`;
    case 'model_retry':
      return `↻ ${modelRetryWords(event)}`;
    case 'view_updated':
    case 'model_text':
      return undefined;
    case 'compacted':
      return `⇣ compacted: ${event.removedMessages} older messages summarised (about ${event.tokensBefore} → ${event.tokensAfter} tokens)`;
  }
}
