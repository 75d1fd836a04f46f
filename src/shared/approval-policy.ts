import { z } from 'zod';
import { type ApprovalMode, type RiskLevel, RiskLevelSchema } from './approvals';
import { TOOL_GROUPS } from './tool-catalog';
import { normalizeToolName } from './tool-policy';

/** Who a request is recorded as decided by when its approval policy's expiry rejects it. */
export const POLICY_DECIDER = 'policy';

const GroupNameSchema = z.string().regex(/^[A-Za-z0-9_.-]+$/, 'a group name is letters, digits, _ . -');
const AfterMsSchema = z.number().int().positive();

/** Who else is offered a request nobody decided in time, and how many of them must allow. */
const EscalationSchema = z.strictObject({
  /** How long after the request was asked, in ms. */
  afterMs: AfterMsSchema,
  /** The group that may decide too. */
  to: GroupNameSchema,
  /** How many distinct members of it must allow (default 1). */
  quorum: z.number().int().positive().default(1),
});

/** When a request nobody decided is rejected, and the reason the model reads. */
const ExpirySchema = z.strictObject({
  /** How long after the request was asked, in ms. */
  afterMs: AfterMsSchema,
  /** What the model reads as the rejection's reason. */
  reason: z.string().trim().min(1),
});

const PolicyRuleSchema = z.strictObject({
  /** Named in events and refusals; `rule N` when absent. */
  name: z.string().trim().min(1).optional(),
  /** Which calls the rule covers: by tool name or `group:<section>`, and by risk. Both absent: every call. */
  match: z
    .strictObject({
      /** Tool names or `group:<section>` names; any tool when absent. */
      tools: z.array(z.string().trim().min(1)).min(1).optional(),
      /** Risk levels; any risk when absent. */
      risk: z.array(RiskLevelSchema).min(1).optional(),
    })
    .default({}),
  /** The group whose members may decide. */
  approvers: GroupNameSchema,
  /** How many distinct members of that group must allow. */
  quorum: z.number().int().positive().default(1),
  /** A reject by one member stops the call (the default); false: only the expiry rejects it. */
  rejectStops: z.boolean().default(true),
  /** When and to whom an undecided request escalates; never when absent. */
  escalate: EscalationSchema.optional(),
  /** When an undecided request is rejected; the policy sets no expiry when absent. */
  expire: ExpirySchema.optional(),
});

/**
 * The operator's approval policy (AGENT_APPROVAL_POLICY): groups of approvers, and rules by tool
 * and risk saying who decides, how many must agree, when a request goes to another group and when
 * it is rejected. The first rule that matches a call governs it. Unknown keys are refused.
 */
export const ApprovalPolicySchema = z
  .strictObject({
    /** Groups of approvers by name: each a list of people. */
    groups: z.record(GroupNameSchema, z.array(z.string().trim().min(1)).min(1)),
    /** The rules, in order: the first that matches a call governs it. */
    rules: z.array(PolicyRuleSchema).min(1),
  })
  .superRefine((policy, context) => {
    policy.rules.forEach((rule, index) => {
      const where = `rules[${index}]${rule.name ? ` (${rule.name})` : ''}`;
      const sized = (group: string, quorum: number, field: string) => {
        const members = policy.groups[group];
        if (!members) {
          context.addIssue({
            code: 'custom',
            message: `${where}: no group ${group}`,
            path: ['rules', index, field],
          });
        } else if (new Set(members).size < quorum) {
          context.addIssue({
            code: 'custom',
            message: `${where}: a quorum of ${quorum} of ${group}, which has ${new Set(members).size} members`,
            path: ['rules', index, field],
          });
        }
      };
      sized(rule.approvers, rule.quorum, 'approvers');
      if (rule.escalate) sized(rule.escalate.to, rule.escalate.quorum, 'escalate');
      if (rule.escalate && rule.expire && rule.expire.afterMs <= rule.escalate.afterMs) {
        context.addIssue({
          code: 'custom',
          message: `${where}: it expires before it escalates`,
          path: ['rules', index, 'expire'],
        });
      }
      for (const tool of rule.match.tools ?? []) {
        if (tool.startsWith('group:') && !TOOL_GROUPS[tool]) {
          context.addIssue({
            code: 'custom',
            message: `${where}: no tool group ${tool}`,
            path: ['rules', index],
          });
        }
      }
    });
  });
export type ApprovalPolicy = z.infer<typeof ApprovalPolicySchema>;
export type ApprovalPolicyInput = z.input<typeof ApprovalPolicySchema>;

/** One group of a request's policy: its members and how many of them must allow. */
export interface PolicyGroup {
  /** The group's name. */
  name: string;
  /** Who is in it. */
  members: string[];
  /** How many distinct members must allow. */
  quorum: number;
}

/**
 * The policy a pending request is decided under, fixed when it is asked (a changed policy file
 * does not change it), with its deadlines in workflow time.
 */
export interface RequestPolicy {
  /** The rule's name (`rule N` when it has none). */
  rule: string;
  /** The group that decides. */
  group: PolicyGroup;
  /** Whether one member's reject stops the call. */
  rejectStops: boolean;
  /** The group that may decide too once the request escalates, and when it does (workflow time, ms). */
  escalation?: PolicyGroup & {
    /** When the request escalates: workflow time, in ms since the epoch. */
    at: number;
  };
  /** When an undecided request is rejected, and the reason the model reads. */
  expiry?: {
    /** When: workflow time, in ms since the epoch. */
    at: number;
    /** The reason the model reads. */
    reason: string;
  };
}

/** The first rule covering a call of `toolName` at `risk`, with its groups resolved; undefined: no rule does. */
export function policyFor(
  policy: ApprovalPolicy | undefined,
  call: { toolName: string; risk: RiskLevel },
  requestedAt: number,
): RequestPolicy | undefined {
  if (!policy) return undefined;
  const index = policy.rules.findIndex((rule) => ruleCovers(rule, call));
  if (index < 0) return undefined;
  const rule = policy.rules[index]!;
  const group = (name: string, quorum: number): PolicyGroup => ({
    name,
    members: [...new Set(policy.groups[name] ?? [])],
    quorum,
  });
  return {
    rule: rule.name ?? `rule ${index + 1}`,
    group: group(rule.approvers, rule.quorum),
    rejectStops: rule.rejectStops,
    ...(rule.escalate
      ? {
          escalation: {
            ...group(rule.escalate.to, rule.escalate.quorum),
            at: requestedAt + rule.escalate.afterMs,
          },
        }
      : {}),
    ...(rule.expire ? { expiry: { at: requestedAt + rule.expire.afterMs, reason: rule.expire.reason } } : {}),
  };
}

function ruleCovers(
  rule: ApprovalPolicy['rules'][number],
  call: { toolName: string; risk: RiskLevel },
): boolean {
  const name = normalizeToolName(call.toolName);
  const tools = rule.match.tools;
  const byTool =
    !tools ||
    tools.some((entry) =>
      entry.startsWith('group:')
        ? (TOOL_GROUPS[entry] ?? []).includes(name)
        : normalizeToolName(entry) === name,
    );
  const byRisk = !rule.match.risk || rule.match.risk.includes(call.risk);
  return byTool && byRisk;
}

/**
 * What the policy means for a conversation's own approval settings at admission: a tool a rule names
 * asks at least (`ask`), so a conversation setting it to `auto` is refused. A call a rule covers by
 * risk alone is asked whatever the conversation's mode (ApprovalBook).
 */
function policyApprovalFloor(policy: ApprovalPolicy | undefined): Record<string, ApprovalMode> {
  const floor: Record<string, ApprovalMode> = {};
  for (const rule of policy?.rules ?? []) {
    for (const entry of rule.match.tools ?? []) {
      for (const tool of entry.startsWith('group:')
        ? (TOOL_GROUPS[entry] ?? [])
        : [normalizeToolName(entry)]) {
        floor[tool] = 'ask';
      }
    }
  }
  return floor;
}

/** Every approver a policy names, in any group. */
export function policyApprovers(policy: ApprovalPolicy): string[] {
  return [...new Set(Object.values(policy.groups).flat())];
}

/**
 * Why a conversation's approval settings are looser than the policy, or cannot meet it, or
 * undefined. A conversation may ask for more (stricter modes, a shorter timeout), never for less.
 */
export function policyRefusal(
  settings: {
    mode?: 'auto' | 'ask' | undefined;
    tools?: Record<string, ApprovalMode> | undefined;
    approvers?: string[] | undefined;
  },
  policy: ApprovalPolicy | undefined,
): string | undefined {
  if (!policy) return undefined;
  const floor = policyApprovalFloor(policy);
  for (const [tool, mode] of Object.entries(settings.tools ?? {})) {
    if (mode === 'auto' && floor[normalizeToolName(tool)]) {
      return `approval auto for ${tool} is looser than this worker's approval policy, under which its approvers decide every ${tool} call`;
    }
  }
  const governed = Object.keys(floor).filter((tool) => !settings.tools?.[tool]);
  if (settings.mode === 'auto' && governed.length > 0) {
    return `approval mode auto is looser than this worker's approval policy, under which its approvers decide every ${governed[0]} call`;
  }
  if (settings.approvers) {
    for (const [index, rule] of policy.rules.entries()) {
      const members = new Set(policy.groups[rule.approvers]);
      const left = settings.approvers.filter((name) => members.has(name)).length;
      if (left < rule.quorum) {
        return `approvers ${settings.approvers.join(', ')} cannot meet this worker's approval policy: ${rule.name ?? `rule ${index + 1}`} needs ${rule.quorum} of ${rule.approvers}`;
      }
    }
  }
  return undefined;
}
