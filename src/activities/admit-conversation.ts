import { realpath, stat } from 'node:fs/promises';
import { Context } from '@temporalio/activity';
import { temporal } from '@temporalio/proto';
import path from 'node:path';
import { type ApprovalPolicy, policyRefusal } from '../shared/approval-policy';
import { type ModelPrices, priceOf } from '../shared/model-prices';
import type { ApproverKeys } from '../shared/signed-decisions';
import { type ForkVerdict, verifyForkFromHistory } from './fork-verification';
import type { WebhookTarget } from '../shared/webhooks';
import { type DailyTokenBudgets, dailyTokensFor } from '../shared/daily-budget';
import {
  type Admission,
  type AdmissionRequest,
  AdmissionRequestSchema,
  type WorkerFloors,
  floorRefusal,
} from '../shared/worker-floors';

export interface AdmissionDeps {
  /** The workspace of a conversation that names none. */
  defaultWorkspace: string;
  /** Absent: workspaces within the default workspace only, approval as each conversation asks, exec as the worker's mode, no carried state from a start. */
  floors?: Partial<WorkerFloors>;
  /** Approver name -> raw Ed25519 public key (base64url); when present, every decision must be signed. */
  approverKeys?: ApproverKeys;
  /** The operator's approval policy; every group member has an approver key (checked at the worker's start). */
  approvalPolicy?: ApprovalPolicy;
  webhooks?: WebhookTarget[];
  /** The operator's daily token budgets per agent; none when absent. */
  dailyTokenBudgets?: DailyTokenBudgets;
  /** The conversation search attributes are registered on the server (the worker checked at its start). */
  searchAttributes?: boolean;
  /** What models cost (AGENT_MODEL_PRICES), and the model of a conversation that names none: a dollar budget needs a price. */
  prices?: ModelPrices;
  defaultModel?: string;
  /** How the run being admitted started; by default read from its history. */
  runStart?: () => Promise<RunStart>;
  /** Whether a client's start carrying a fork is true to the original; by default checked against history. */
  verifyFork?: () => Promise<ForkVerdict>;
}

/**
 * How a run of a workflow came to be: started by a client, continued as new by the workflow's own
 * code, or a retry or cron run, which Temporal starts with the same input as the run before, so
 * with whatever state a client put there.
 */
export type RunStart = 'client' | 'continued' | 'retry' | 'cron';

/**
 * The run's first history event says who started it: Temporal sets the initiator, no client can.
 * A reset run keeps the event of the run it was reset from.
 */
export async function runStartFromHistory(): Promise<RunStart> {
  const { info, client } = Context.current();
  const execution = info.workflowExecution;
  if (!execution) return 'client';
  const { history } = await client.workflowService.getWorkflowExecutionHistory({
    namespace: info.workflowNamespace ?? client.options.namespace,
    execution,
    maximumPageSize: 1,
  });
  const started = history?.events?.[0]?.workflowExecutionStartedEventAttributes;
  if (!started?.continuedExecutionRunId) return 'client';
  switch (started.initiator) {
    case temporal.api.enums.v1.ContinueAsNewInitiator.CONTINUE_AS_NEW_INITIATOR_WORKFLOW:
      return 'continued';
    case temporal.api.enums.v1.ContinueAsNewInitiator.CONTINUE_AS_NEW_INITIATOR_RETRY:
      return 'retry';
    case temporal.api.enums.v1.ContinueAsNewInitiator.CONTINUE_AS_NEW_INITIATOR_CRON_SCHEDULE:
      return 'cron';
    default:
      return 'client';
  }
}

/**
 * Run by every conversation as a local activity when an execution starts: the worker holds the
 * conversation's options to its operator's floors (workspace roots, approval, exec security, carried
 * state) and tells it the floors and approver keys it then lives by. A refusal ends the conversation
 * before anything runs.
 */
export function createAdmitConversation(deps: AdmissionDeps) {
  return async (input: AdmissionRequest): Promise<Admission> => {
    // Workflow code sends it, but a workflow of another version (or a hand-made one) may not.
    const parsed = AdmissionRequestSchema.safeParse(input);
    if (!parsed.success) {
      return {
        admitted: false,
        reason: `refused by the worker: a malformed admission request: ${parsed.error.message}`,
      };
    }
    const request = parsed.data;
    const floors: WorkerFloors = {
      workspaceRoots: deps.floors?.workspaceRoots ?? [deps.defaultWorkspace],
      approval: deps.floors?.approval ?? {},
      execSecurity: deps.floors?.execSecurity ?? 'full',
      acceptCarried: deps.floors?.acceptCarried ?? [],
    };
    const workspaceProblem = await workspaceRefusal(
      request.workspace ?? deps.defaultWorkspace,
      floors.workspaceRoots,
    );
    // Whether carried state comes from this conversation's own hand-over is the worker's to find
    // out, not the workflow's to say: a cron or retry run carries a client's input as if continued.
    let continued =
      request.carried.length > 0 && (await (deps.runStart ?? runStartFromHistory)()) === 'continued';
    // A fork's transcript is checked, not trusted: the worker rebuilds it from the original's
    // history. An operator who accepts carried state from clients anyway needs no check.
    const accepted = (part: string) => (floors.acceptCarried as string[]).includes(part);
    if (!continued && request.carried.includes('forkedFrom') && !request.carried.every(accepted)) {
      const verdict = await (deps.verifyFork ?? verifyForkFromHistory)();
      if (!verdict.verified) return { admitted: false, reason: `refused by the worker: ${verdict.reason}` };
      continued = true;
    }
    const reason =
      workspaceProblem ??
      floorRefusal({ ...request, continued }, floors) ??
      policyRefusal(request.approval, deps.approvalPolicy) ??
      costBudgetRefusal(request, deps);
    if (reason) return { admitted: false, reason: `refused by the worker: ${reason}` };
    const dailyTokenBudget =
      request.agentId === undefined ? undefined : dailyTokensFor(deps.dailyTokenBudgets, request.agentId);
    return {
      admitted: true,
      approvalFloor: floors.approval,
      ...(dailyTokenBudget !== undefined ? { dailyTokenBudget } : {}),
      ...(deps.approverKeys ? { approverKeys: deps.approverKeys } : {}),
      ...(deps.approvalPolicy ? { approvalPolicy: deps.approvalPolicy } : {}),
      ...(deps.webhooks?.length ? { webhooks: deps.webhooks } : {}),
      ...(deps.searchAttributes ? { searchAttributes: true } : {}),
    };
  };
}

async function workspaceRefusal(workspace: string, roots: readonly string[]): Promise<string | undefined> {
  if (!path.isAbsolute(workspace))
    return `the workspace must be an absolute path, not ${JSON.stringify(workspace)}`;
  let real: string;
  try {
    real = await realpath(workspace);
    if (!(await stat(real)).isDirectory()) return `the workspace ${workspace} is not a directory`;
  } catch {
    return `the workspace ${workspace} does not exist`;
  }
  for (const root of roots) {
    const realRoot = await realpath(root).catch(() => undefined);
    if (realRoot === undefined) continue;
    const relative = path.relative(realRoot, real);
    const outside = relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative);
    if (!outside) return undefined;
  }
  return `the workspace ${workspace} lies outside the directories this worker serves (${roots.join(', ')})`;
}

/** A dollar budget counts nothing without a price for the conversation's model: refused, rather than never pausing. */
function costBudgetRefusal(request: AdmissionRequest, deps: AdmissionDeps): string | undefined {
  if (!request.costBudget) return undefined;
  const model = request.costBudget.model ?? deps.defaultModel;
  if (model !== undefined && deps.prices && priceOf(deps.prices, model)) return undefined;
  return `budget.usd needs a price for ${model === undefined ? "the worker's model" : `model ${model}`} in the worker's price table (AGENT_MODEL_PRICES)`;
}
