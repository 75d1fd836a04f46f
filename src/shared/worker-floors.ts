import type { ApprovalPolicy } from './approval-policy';
import { z } from 'zod';
import { type ApprovalMode, ApprovalModeSchema, type ApprovalSettings } from './approvals';
import { type ExecSecurityMode, ExecSecurityModeSchema } from './exec-security';
import type { ApproverKeys } from './signed-decisions';
import type { WebhookTarget } from './webhooks';

/**
 * What a worker's operator holds every conversation to, whatever its options say: any client of
 * the task queue can start a conversation, so its options are requests, not rights.
 */
export const CARRIED_PARTS = [
  'transcript',
  'events',
  'standingApprovals',
  'queue',
  'runCount',
  'endRequested',
  'continuations',
  'rap',
  'paused',
  'usedSignatures',
  'budget',
  'forkedFrom',
  'takenMessages',
  'a2aPush',
] as const;
export const CarriedPartSchema = z.enum(CARRIED_PARTS);
export type CarriedPart = z.infer<typeof CarriedPartSchema>;

/** The limits a worker holds every conversation to, whatever its options ask: where workspaces may be, the least approval per tool, the loosest `exec` security, and which carried state a start may bring. */
export interface WorkerFloors {
  /** Directories (real paths) a conversation's workspace must lie in. */
  workspaceRoots: string[];
  /** The least approval a tool gets, by tool name; `*` for every tool. */
  approval: Record<string, ApprovalMode>;
  /** The loosest `execSecurity` a conversation may ask for. */
  execSecurity: ExecSecurityMode;
  /**
   * Parts of carried state a conversation may be started with. A run continued from an earlier one
   * of the same conversation carries its state anyway; from any other start, carried state is a
   * client's claim (standing approvals, a forged transcript) and refused unless listed here.
   */
  acceptCarried: CarriedPart[];
}

/** What the workflow asks the worker when a run starts. */
export const AdmissionRequestSchema = z.object({
  workspace: z.string().optional(),
  execSecurity: ExecSecurityModeSchema.optional(),
  approval: z.object({
    mode: z.enum(['auto', 'ask']).optional(),
    tools: z.record(z.string(), ApprovalModeSchema).optional(),
    approvers: z.array(z.string()).optional(),
  }),
  /** The carried parts present. */
  carried: z.array(z.string()),
  /**
   * Whether this run continues an earlier one of the conversation, as the workflow sees it; the
   * worker finds out for itself (the run's first history event), since cron and retry runs look
   * continued to the workflow too.
   */
  continued: z.boolean(),
  /** The conversation's agent id, whose daily token budget the worker tells (absent from workflows before daily budgets). */
  agentId: z.string().optional(),
  /** Set when the conversation budgets dollars: the worker must have a price for its model (its own default when absent). */
  costBudget: z.object({ model: z.string().optional() }).optional(),
});
export type AdmissionRequest = z.infer<typeof AdmissionRequestSchema>;

/** The worker's answer: refused (nothing runs), or the floors and keys the conversation then lives by. */
export type Admission =
  | { admitted: false; reason: string }
  | {
      admitted: true;
      approvalFloor: Record<string, ApprovalMode>;
      approverKeys?: ApproverKeys;
      /** The operator's approval policy (AGENT_APPROVAL_POLICY): quorums, escalation and expiry by tool and risk. */
      approvalPolicy?: ApprovalPolicy;
      /** The worker's webhooks: the conversation schedules a delivery for each event one wants. */
      webhooks?: WebhookTarget[];
      /** The worker found the conversation search attributes registered: the conversation keeps them up to date. */
      searchAttributes?: boolean;
      /** The tokens the conversation's agent may spend per UTC day across the fleet (AGENT_BUDGET_TOKENS_PER_DAY). */
      dailyTokenBudget?: number;
    };

const APPROVAL_STRICTNESS: Record<ApprovalMode, number> = { auto: 0, ask: 1, always: 2 };
const EXEC_STRICTNESS: Record<ExecSecurityMode, number> = { full: 0, sandbox: 1, 'safe-bin': 2 };

/** The stricter of two approval modes. */
export function stricterApproval(a: ApprovalMode, b: ApprovalMode | undefined): ApprovalMode {
  return b !== undefined && APPROVAL_STRICTNESS[b] > APPROVAL_STRICTNESS[a] ? b : a;
}

/** The floor for one tool: its own entry, else `*`. */
export function approvalFloorFor(
  floor: Record<string, ApprovalMode>,
  toolName: string,
): ApprovalMode | undefined {
  return floor[toolName] ?? floor['*'];
}

/**
 * Why a conversation asking `request` is refused by these floors (the workspace aside, which needs
 * the file system), or undefined. Pure.
 */
export function floorRefusal(request: AdmissionRequest, floors: WorkerFloors): string | undefined {
  if (request.execSecurity && EXEC_STRICTNESS[request.execSecurity] < EXEC_STRICTNESS[floors.execSecurity]) {
    return `execSecurity ${request.execSecurity} is looser than this worker allows (${floors.execSecurity} at the loosest)`;
  }
  const below = approvalBelowFloor(request.approval, floors.approval);
  if (below) return below;
  if (!request.continued) {
    const refused = request.carried.filter((part) => !(floors.acceptCarried as string[]).includes(part));
    if (refused.length > 0) {
      return `carried state (${refused.join(', ')}) is accepted only from this conversation's own earlier run`;
    }
  }
  return undefined;
}

function approvalBelowFloor(
  settings: Pick<ApprovalSettings, 'mode' | 'tools'>,
  floor: Record<string, ApprovalMode>,
): string | undefined {
  for (const [tool, mode] of Object.entries(settings.tools ?? {})) {
    const least = approvalFloorFor(floor, tool);
    if (least && APPROVAL_STRICTNESS[mode] < APPROVAL_STRICTNESS[least]) {
      return `approval ${mode} for ${tool} is below this worker's floor (${least})`;
    }
  }
  if (settings.mode === 'auto') {
    const floored = Object.entries(floor).filter(
      ([tool, least]) => least !== 'auto' && !settings.tools?.[tool],
    );
    if (floored.length > 0) {
      const [tool, least] = floored[0]!;
      return `approval mode auto is below this worker's floor for ${tool === '*' ? 'every tool' : tool} (${least})`;
    }
  }
  return undefined;
}
