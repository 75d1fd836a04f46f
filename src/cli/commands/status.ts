import { policySummary } from '../../shared/pending-policy';
import type { PendingApproval } from '../../shared/approvals';
import type { BudgetPause, BudgetStatus, BudgetUsage } from '../../shared/budget';
import type { DailySpent } from '../../shared/daily-budget';
import { budgetPauseWords, dailyBudgetPauseWords, usdWords } from '../../client/budget-words';
import { RAISE_FLAGS } from '../raise-flags';
import type { ConversationStatusSummary, LastRunSummary } from '../../shared/conversation-api';
import { oneLine } from '../../shared/one-line';
import type { ConversationExecution } from '../../client/agent-client';
import { approveCommandLine } from '../approval-choices';
import type { AgentEvent } from '../../shared/events';
import { type Cleanups, log } from '../cleanups';
import { type DisabledTool, disabledTools } from '../terminal/disabled-tools';
import { webUiLink } from '../terminal/web-ui-link';
import { modelRetryWords } from '../../client/event-line';
import { connectAgent } from '../connect-agent';
import { conversationIdArg, namedPositionals, parseCommandArgs } from '../parse-command-args';
import { printable, withUnprintableShown } from '../../shared/printable-text';
import { listedPollers, noWorkerFor, sayingWhenSlow, unansweredWords } from '../worker-presence';

export interface StatusArgs {
  conversationId: string;
  json: boolean;
}

export function parseStatusArgs(args: string[]): StatusArgs {
  const { values, positionals } = parseCommandArgs('status', {
    args,
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false } },
  });
  const { ID } = namedPositionals('status', positionals, ['ID'] as const);
  return { conversationId: conversationIdArg(ID), json: values.json };
}

/** What `status` knows: always the execution; the summary and approvals while the conversation lasts. */
export interface StatusReport {
  execution: ConversationExecution;
  summary?: ConversationStatusSummary;
  pendingApprovals?: PendingApproval[];
  /** The conversation in the Temporal Web UI, when known. */
  webUiUrl?: string;
  /** The conversation's agent's tokens today across the fleet, when its worker sets it a daily budget. */
  agentToday?: DailySpent;
  /** Tools a worker has disabled for a while (circuit breaker open), from the latest calls. */
  disabledTools?: DisabledTool[];
}

/**
 * How long a running conversation's worker may take to answer before `status` says that none has:
 * a live worker answers in milliseconds, a dead one's question waits for the server's timeout.
 */
const UNANSWERED_NOTE_MS = 3_000;

/** Arguments shown on the status line; the rest (whole) with --json. */
const STATUS_ARGUMENTS_CHARS = 200;
const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

export function formatStatus(report: StatusReport): string {
  const { execution, summary, pendingApprovals = [] } = report;
  const id = execution.conversationId;
  const link = report.webUiUrl ? `  web UI: ${report.webUiUrl}\n` : '';
  if (!summary) {
    const closed = execution.closeTime ? ` at ${execution.closeTime.toISOString()}` : '';
    return `conversation ${id}: ended (${execution.executionStatus.toLowerCase()}${closed})\n${link}`;
  }
  const state = summary.status === 'running' ? `running run ${summary.runCount}` : summary.status;
  const lines = [
    `conversation ${id}: ${state}`,
    `  started ${execution.startTime.toISOString()} on task queue ${execution.taskQueue}`,
    `  ${plural(summary.runCount, 'run')}, ${plural(summary.transcriptLength, 'message')}, ${plural(summary.queuedMessages, 'queued message')}, last event #${summary.lastSeq}`,
  ];
  if (summary.lastRun) lines.push(`  ${lastRunWords(summary.lastRun)}`);
  if (summary.forkedFrom) {
    const { conversationId, runId, atRun } = summary.forkedFrom;
    lines.push(`  forked from ${conversationId} at run ${atRun}${runId ? ` (execution ${runId})` : ''}`);
  }
  if (report.webUiUrl) lines.push(`  web UI: ${report.webUiUrl}`);
  if (summary.approvalMode && summary.approvalMode !== 'default') {
    lines.push(`  approval mode: ${summary.approvalMode}`);
  }
  if (execution.modelRetry) lines.push(`  ${modelRetryWords(execution.modelRetry)}`);
  lines.push(...budgetLines(summary.budget));
  const daily = summary.budget?.daily;
  if (daily && report.agentToday) {
    lines.push(
      `  agent ${daily.agentId} today (UTC ${report.agentToday.day}, every conversation on every worker): ${plural(report.agentToday.tokens, 'token')} of ${daily.tokensPerDay} a day`,
    );
  }
  for (const { tool, until } of report.disabledTools ?? []) {
    lines.push(
      `  ${tool} is disabled on a worker until ${until} (it failed too often: its circuit breaker is open)`,
    );
  }
  if (pendingApprovals.length) {
    lines.push(`  waiting for approval (${pendingApprovals.length}):`);
    for (const approval of pendingApprovals) {
      if (approval.budget) {
        lines.push(...budgetPauseLines(id, approval, approval.budget));
        continue;
      }
      const expires = approval.expiresAt ? `, rejected at ${new Date(approval.expiresAt).toISOString()}` : '';
      const length = approval.argumentsLength ?? approval.arguments.length;
      const cut =
        length > STATUS_ARGUMENTS_CHARS ? ` … [${length} characters in all: --json shows them whole]` : '';
      const hash = approval.argumentsSha256 ? ` --sha256 ${approval.argumentsSha256}` : '';
      lines.push(
        `    ${approval.toolCallId}  ${approval.toolName} (risk ${approval.risk}, asked ${new Date(approval.requestedAt).toISOString()}${expires}): ${withUnprintableShown(approval.arguments.slice(0, STATUS_ARGUMENTS_CHARS))}${cut}`,
        `      ${approveCommandLine(id, approval.toolCallId)}${hash} [--always] [--reject] [--reason TEXT]`,
        ...(approval.policy ? [`      ${policySummary(approval.policy)}`] : []),
      );
    }
  } else {
    lines.push('  no tool call is waiting for approval');
  }
  return `${lines.join('\n')}\n`;
}

/** `last run 3: answered`, or refused with the provider's words. */
function lastRunWords({ run, outcome, refusal }: LastRunSummary): string {
  if (outcome !== 'refused') return `last run ${run}: ${outcome.replace(/_/g, ' ')}`;
  return `last run ${run}: refused by the model's provider${refusal ? `: ${oneLine(refusal, 400)}` : ' (it gave no reason)'}`;
}

/** `1200 tokens (800 cached, 40 reasoning), 3 tool calls, $0.0123`: the parts a provider reported. */
function spent(usage: BudgetUsage): string {
  const details = [
    ...(usage.cachedInputTokens ? [`${usage.cachedInputTokens} cached`] : []),
    ...(usage.reasoningTokens ? [`${usage.reasoningTokens} reasoning`] : []),
  ];
  return [
    `${plural(usage.tokens, 'token')}${details.length ? ` (${details.join(', ')})` : ''}`,
    plural(usage.toolCalls, 'tool call'),
    ...(usage.usd !== undefined ? [usdWords(usage.usd)] : []),
  ].join(', ');
}

/** What the conversation has spent (and its latest run), and its budget when it has one. */
function budgetLines(budget: BudgetStatus | undefined): string[] {
  if (!budget) return [];
  const lines = [`  spent ${spent(budget.used)} (run ${budget.run.run}: ${spent(budget.run)})`];
  const { tokens, toolCalls, deadlineAt, usd } = budget.limits;
  const limits = [
    ...(tokens !== undefined ? [plural(tokens, 'token')] : []),
    ...(usd !== undefined ? [usdWords(usd)] : []),
    ...(toolCalls !== undefined ? [plural(toolCalls, 'tool call')] : []),
    ...(deadlineAt !== undefined ? [`until ${new Date(deadlineAt).toISOString()}`] : []),
  ];
  if (limits.length) lines.push(`  budget: ${limits.join(', ')}`);
  return lines;
}

/** A run paused at its budget: what ran out, and the commands that raise it or stop the run. */
function budgetPauseLines(id: string, approval: PendingApproval, pause: BudgetPause): string[] {
  const { reached, defaultRaise } = budgetPauseWords(pause);
  if (pause.kind === 'dailyTokens') {
    return [
      `    ${approval.toolCallId}  run ${approval.run} reached its ${reached} (asked ${new Date(approval.requestedAt).toISOString()})`,
      `      ${dailyBudgetPauseWords(pause)}: ${approveCommandLine(id, approval.toolCallId)} --reject`,
    ];
  }
  return [
    `    ${approval.toolCallId}  run ${approval.run} reached its ${reached} (asked ${new Date(approval.requestedAt).toISOString()})`,
    `      ${approveCommandLine(id, approval.toolCallId)} [${RAISE_FLAGS[pause.kind]}] (default: ${defaultRaise}), or --reject to stop the run`,
  ];
}

/** `status`: one conversation's state and pending approvals, on stdout. */
export async function statusCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const status = parseStatusArgs(args);
  const { agent, client, settings } = await connectAgent(cleanups, { startServer: false });
  const execution = await agent.execution(status.conversationId);
  const webUiUrl = webUiLink(settings, status.conversationId);
  const report: StatusReport = { execution, ...(webUiUrl ? { webUiUrl } : {}) };
  if (execution.executionStatus === 'RUNNING') {
    const unanswered = await noWorkerFor(client, settings.namespace, execution.taskQueue);
    let events: AgentEvent[];
    try {
      if (unanswered) throw new Error(unanswered);
      const asked = Date.now();
      [report.summary, report.pendingApprovals, events] = await sayingWhenSlow(
        Promise.all([
          agent.status(status.conversationId),
          agent.pendingApprovals(status.conversationId),
          agent.events(status.conversationId),
        ]),
        UNANSWERED_NOTE_MS,
        async () =>
          unansweredWords({
            conversationId: status.conversationId,
            taskQueue: execution.taskQueue,
            waitedMs: Date.now() - asked,
            pollers: await listedPollers(client, settings.namespace, execution.taskQueue),
            nowMs: Date.now(),
          }),
        log,
      );
    } catch (error) {
      // Only a worker answers what a running conversation is doing; the server alone knows that it runs.
      log(
        `conversation ${status.conversationId} is running on task queue ${execution.taskQueue} (since ${execution.startTime.toISOString()}), ` +
          `but no worker answered for it (${(error as Error).message}): is a worker running on that task queue? (durable-agent worker)`,
      );
      return 1;
    }
    report.disabledTools = disabledTools(events, Date.now());
    const daily = report.summary.budget?.daily;
    if (daily) report.agentToday = await agent.agentSpentToday(daily.agentId);
  }
  process.stdout.write(
    status.json
      ? `${JSON.stringify({
          ...execution,
          ...report.summary,
          pendingApprovals: report.pendingApprovals ?? [],
          disabledTools: report.disabledTools ?? [],
          ...(report.agentToday ? { agentToday: report.agentToday } : {}),
          ...(webUiUrl ? { webUiUrl } : {}),
        })}\n`
      : printable(formatStatus(report)),
  );
  return 0;
}
