import { allHandlersFinished, condition, makeContinueAsNewFunc, setHandler } from '@temporalio/workflow';
import {
  type AgentDailyBudgetInput,
  DailySpendSchema,
  type DailySpent,
  agentDailyBudgetStatusQuery,
  nextUtcDayStartMs,
  spendDailyTokensUpdate,
} from '../shared/daily-budget';
import { workflowTime } from './workflow-time';
import { runHistoryIsLong } from './history-bound';
import { WORKFLOW_TASK_TIMEOUT_MS } from '../shared/workflow-task-bounds';

/** Report keys remembered to count a repeated report once: retries come within minutes, not thousands of calls later. */
const REMEMBERED_KEYS = 2_000;
/** How long after its day the ledger still takes reports of calls that began that day. */
const LATE_REPORTS_MS = 60 * 60 * 1000;

/**
 * One agent's tokens for one UTC day across the fleet (workflow id
 * `agent-daily-budget:<agentId>:<day>`): model activities read it before a call and add what the
 * call spent after it. It ends an hour after its day (a report after that starts a ledger of its
 * own that ends at once); it continues as new when Temporal suggests (or at `maxHistoryEvents`),
 * carrying the count and the keys it remembers.
 */
export async function agentDailyBudget(input: AgentDailyBudgetInput): Promise<void> {
  let tokens = input.carried?.tokens ?? 0;
  const recentKeys = [...(input.carried?.recentKeys ?? [])];
  const seen = new Set(recentKeys);
  const spent = (): DailySpent => ({ agentId: input.agentId, day: input.day, tokens });

  setHandler(
    spendDailyTokensUpdate,
    (request) => {
      if (request.key !== undefined) {
        if (seen.has(request.key)) return spent();
        seen.add(request.key);
        recentKeys.push(request.key);
        if (recentKeys.length > REMEMBERED_KEYS) seen.delete(recentKeys.shift()!);
      }
      tokens += request.tokens;
      return spent();
    },
    {
      validator: (request) => {
        DailySpendSchema.parse(request);
      },
    },
  );
  setHandler(agentDailyBudgetStatusQuery, spent);

  const { maxHistoryEvents } = input;
  const endsAt = nextUtcDayStartMs(Date.parse(`${input.day}T00:00:00Z`)) + LATE_REPORTS_MS;
  const suggested = await condition(
    () => runHistoryIsLong(maxHistoryEvents),
    Math.max(1, endsAt - workflowTime()),
  );
  await condition(allHandlersFinished);
  if (suggested) {
    await makeContinueAsNewFunc<typeof agentDailyBudget>({ workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT_MS })({
      agentId: input.agentId,
      day: input.day,
      carried: { tokens, recentKeys },
      ...(maxHistoryEvents !== undefined ? { maxHistoryEvents } : {}),
    });
  }
}
