import { Context } from '@temporalio/activity';
import { WithStartWorkflowOperation } from '@temporalio/client';
import {
  AGENT_DAILY_BUDGET_WORKFLOW_TYPE,
  type AgentDailyBudgetInput,
  type DailyBudgetSpent,
  type DailySpend,
  type DailySpent,
  type DailyTokenBudgets,
  agentDailyBudgetWorkflowId,
  dailyTokensFor,
  nextUtcDayStartMs,
  spendDailyTokensUpdate,
  utcDayOf,
} from '../shared/daily-budget';
import type { Usage } from '../shared/messages';
import { isServerBusy } from './server-busy';
import { WORKFLOW_TASK_TIMEOUT_MS } from '../shared/workflow-task-bounds';

/** A model activity's view of its agent's day: asked before the call, told after it. */
export interface DailyTokenGate {
  /** DailyBudgetSpent when the agent's day is spent (the model must not be called), else undefined. */
  check(): Promise<DailyBudgetSpent | undefined>;
  /** Adds the call's tokens to the day the check looked at; best effort (a lost report is tokens not counted). */
  report(usage: Usage | undefined): Promise<void>;
}

/**
 * The operator's daily token budgets, kept fleet-wide by one ledger workflow per agent id and UTC
 * day (`agent-daily-budget:<agentId>:<YYYY-MM-DD>`), started by the first worker to read or report
 * (update-with-start) on the activity's task queue. The day is the worker's UTC clock at the check.
 */
export class DailyTokenLedger {
  constructor(
    private readonly budgets: DailyTokenBudgets,
    /** The clock days are counted by (epoch ms); the machine's by default. */
    private readonly now: () => number = Date.now,
  ) {}

  /** The gate for one model call of `agentId`, or undefined when this worker gives that agent no daily budget. */
  gateFor(agentId: string | undefined): DailyTokenGate | undefined {
    if (agentId === undefined) return undefined;
    const limit = dailyTokensFor(this.budgets, agentId);
    if (limit === undefined) return undefined;
    const { info } = Context.current();
    const checkedAt = this.now();
    const day = utcDayOf(checkedAt);
    // One key per activity, not per attempt: a retry after a report does not count its tokens twice.
    const key = `${info.workflowExecution?.workflowId ?? ''}/${info.workflowExecution?.runId ?? ''}/${info.activityId}`;
    return {
      check: async () => {
        const { tokens } = await spend(agentId, day, { tokens: 0 });
        if (tokens < limit) return undefined;
        return {
          dailyBudgetSpent: {
            agentId,
            day,
            used: tokens,
            limit,
            nextDayInMs: nextUtcDayStartMs(checkedAt) - checkedAt,
          },
        };
      },
      report: async (usage) => {
        const tokens = usage ? usage.inputTokens + usage.outputTokens : 0;
        if (tokens > 0) await spend(agentId, day, { tokens, key }).catch(() => undefined);
      },
    };
  }
}

/** How long to wait before asking again when the server refuses more waiting updates for the ledger. */
const BUSY_LEDGER_RETRY_MS = 200;

/** Spends on the ledger, asking again (and heartbeating meanwhile) while the server says it is busy. */
async function spend(agentId: string, day: string, request: DailySpend): Promise<DailySpent> {
  const context = Context.current();
  for (;;) {
    context.cancellationSignal.throwIfAborted();
    try {
      return await spendOnce(agentId, day, request);
    } catch (error) {
      if (!isServerBusy(error)) throw error;
      context.heartbeat();
      await new Promise((resolve) => setTimeout(resolve, BUSY_LEDGER_RETRY_MS));
    }
  }
}

function spendOnce(agentId: string, day: string, request: DailySpend): Promise<DailySpent> {
  const { client, info } = Context.current();
  return client.workflow.executeUpdateWithStart(spendDailyTokensUpdate, {
    args: [request],
    startWorkflowOperation: new WithStartWorkflowOperation<(input: AgentDailyBudgetInput) => Promise<void>>(
      AGENT_DAILY_BUDGET_WORKFLOW_TYPE,
      {
        workflowId: agentDailyBudgetWorkflowId(agentId, day),
        taskQueue: info.taskQueue,
        workflowIdConflictPolicy: 'USE_EXISTING',
        args: [{ agentId, day }],
        // Its workflow tasks go before the conversations' that wait for it.
        priority: { priorityKey: 1 },
        // The agent's model calls wait on it: a dead worker's task is taken over soon.
        workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT_MS,
      },
    ),
  });
}
