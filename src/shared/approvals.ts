import { z } from 'zod';
import type { RequestPolicy } from './approval-policy';
import { type BudgetPause, BudgetRaiseSchema } from './budget';

/** Risk levels: what a tool can do to the world, from reading (low) to destroying (critical). */
export const RiskLevelSchema = z.enum(['low', 'medium', 'high', 'critical']);
export type RiskLevel = z.infer<typeof RiskLevelSchema>;

/**
 * `auto` runs without asking; `ask` asks unless the tool was allowed (or rejected) always in this
 * conversation; `always` asks every time (a remembered rejection still blocks it).
 */
export const ApprovalModeSchema = z.enum(['auto', 'ask', 'always']);
/**
 * Whether a tool asks before it runs: `auto` runs without asking; `ask` asks unless the tool was
 * allowed (or rejected) always in this conversation; `always` asks every time.
 *
 * @useDeclaredType
 */
export type ApprovalMode = z.infer<typeof ApprovalModeSchema>;

/** Read-only tools run on their own; local modifications and system operations ask; destructive ones always ask. */
export function defaultApprovalMode(risk: RiskLevel): ApprovalMode {
  switch (risk) {
    case 'low':
      return 'auto';
    case 'medium':
    case 'high':
      return 'ask';
    case 'critical':
      return 'always';
  }
}

export const ApprovalDecisionKindSchema = z.enum([
  'allow_once',
  'allow_always',
  'reject_once',
  'reject_always',
]);
export type ApprovalDecisionKind = z.infer<typeof ApprovalDecisionKindSchema>;

/** The payload of the `approve` signal and update. `by` names the approver, checked against `approvers`. Unknown keys are refused. */
export const ApprovalDecisionSchema = z.strictObject({
  /** The pending call (or budget pause) decided on. */
  toolCallId: z.string().min(1, 'toolCallId is empty'),
  /** Allow or reject, once or for the rest of the conversation. */
  decision: ApprovalDecisionKindSchema,
  /** Who decides. */
  by: z.string().trim().min(1, 'by (the approver) is empty'),
  /** Why, for the record (and for the model, on a reject). */
  reason: z.string().optional(),
  /**
   * The SHA-256 (hex) of the arguments the decider saw. When given, the decision holds only for a
   * call with exactly those arguments; one made for other arguments is refused.
   */
  argumentsSha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/, 'argumentsSha256 is 64 lowercase hex digits')
    .optional(),
  /**
   * Where the worker names approver keys: the approver's Ed25519 signature (base64) over the
   * decision's fields and `signatureExpiresAt` (see signed-decisions.ts).
   */
  signature: z.string().trim().min(1).max(200).optional(),
  /** When the signature stops counting, in ms since the epoch. */
  signatureExpiresAt: z.number().int().positive().optional(),
  /**
   * Only on an allow of a budget pause: how much more the run may spend (tokens, tool calls, ms),
   * counted from what it has used. It must name the part that ran out; without it, that part is
   * raised by the conversation's original budget for it.
   */
  raise: BudgetRaiseSchema.optional(),
  /**
   * Under an approval policy: the decider (`by`) decides in the place of `from`, who signed this
   * delegation to them until `expiresAt`; the decision counts as `from`'s, once.
   */
  delegation: z
    .strictObject({
      /** The approver who delegated. */
      from: z.string().trim().min(1),
      /** When the delegation ends, in ms since the epoch. */
      expiresAt: z.number().int().positive(),
      /** `from`'s Ed25519 signature (base64) over the delegation. */
      signature: z.string().trim().min(1).max(200),
    })
    .optional(),
});
/**
 * A decision on a pending approval, as sent to the `approve` update or signal: which call, allow
 * or reject, by whom, optionally signed.
 *
 * @useDeclaredType
 */
export type ApprovalDecision = z.infer<typeof ApprovalDecisionSchema>;

/** Whether the decision allows the call (once or always). */
export function isAllow(decision: ApprovalDecisionKind): boolean {
  return decision === 'allow_once' || decision === 'allow_always';
}

/** A tool call waiting for a decision, as the `pendingApprovals` query shows it. */
export interface PendingApproval {
  /** The call waiting (`budget-N` for a budget pause). */
  toolCallId: string;
  /** The tool's name. */
  toolName: string;
  /** The model's arguments as it sent them (JSON text), whole unless longer than PENDING_ARGUMENTS_CHARS. */
  arguments: string;
  /** Set when `arguments` was cut: decide by the hash, or reject. */
  argumentsTruncated?: boolean;
  /** Characters in the whole arguments text. */
  argumentsLength: number;
  /** SHA-256 (hex) of the whole arguments text: what a decision's `argumentsSha256` must name. */
  argumentsSha256: string;
  /** What a standing decision on this call covers: the tool, or for tools that reach hosts, the tool at one host. */
  scope: string;
  /** The tool's risk level. */
  risk: RiskLevel;
  /** The approval mode that made it ask. */
  mode: ApprovalMode;
  /** Workflow time in ms when the approval was asked for. */
  requestedAt: number;
  /** Workflow time in ms when it is rejected for want of a decision, if the conversation has a timeout. */
  expiresAt?: number;
  /** The run the call belongs to. */
  run: number;
  /** Set when this is no tool call but a run paused at its budget: allow raises it, reject stops the run. */
  budget?: BudgetPause;
  /** Set when the operator's approval policy governs the call: who decides, how many, and who has allowed. */
  policy?: PendingPolicy;
}

/** A request's policy, fixed when it was asked, and how far its decision has come. */
export interface PendingPolicy extends RequestPolicy {
  /** The allows counted so far, one per approver (`via`: the delegate who decided in their place). */
  allowed: Array<{
    /** The approver whose allow it is. */
    by: string;
    /** Once, or always. */
    decision: 'allow_once' | 'allow_always';
    /** The delegate who decided in their place, if one did. */
    via?: string;
  }>;
  /** Its escalation deadline passed: the escalation group may decide too. */
  escalated: boolean;
}

/** Arguments longer than this are shown cut (with their length and hash); far more than a model sends. */
export const PENDING_ARGUMENTS_CHARS = 128 * 1024;

/** A decision that holds for a tool for the rest of the conversation (allow_always, reject_always). */
export interface StandingDecision {
  /** Allow or reject. */
  decision: 'allow' | 'reject';
  /** Who decided. */
  by: string;
  /** Made by an approval policy's quorum: only such an allow covers calls a policy governs. */
  quorum?: boolean;
}

/** A conversation's `approval` option; unknown keys are refused. */
export const ApprovalSettingsSchema = z.strictObject({
  /** `auto` never asks (except for `always` tools), `ask` asks for every tool; per-tool defaults when absent. */
  mode: z.enum(['auto', 'ask']).optional(),
  /** Per-tool modes; these win over `mode` and the tools' defaults. */
  tools: z.record(z.string(), ApprovalModeSchema).optional(),
  /** Who may decide (the `by` of a decision); anyone when absent. */
  approvers: z.array(z.string().trim().min(1)).min(1).optional(),
  /** A pending approval is rejected after this long; it waits forever when absent. */
  timeoutMs: z.number().int().positive().optional(),
});
/**
 * How a conversation asks for approvals: its mode, per-tool modes, who may decide and how long a
 * pending approval waits.
 *
 * @useDeclaredType
 */
export type ApprovalSettings = z.infer<typeof ApprovalSettingsSchema>;

/** Per-tool setting, then the conversation's mode, then the tool's own default. */
export function effectiveApprovalMode(
  settings: ApprovalSettings,
  toolName: string,
  toolDefault: ApprovalMode,
): ApprovalMode {
  const perTool = settings.tools?.[toolName];
  if (perTool) return perTool;
  if (toolDefault === 'always') return 'always';
  if (settings.mode === 'auto') return 'auto';
  if (settings.mode === 'ask') return 'ask';
  return toolDefault;
}
