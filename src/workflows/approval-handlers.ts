import { ApplicationFailure, condition, patched, setHandler } from '@temporalio/workflow';
import { type ApprovalDecision, ApprovalDecisionSchema } from '../shared/approvals';
import {
  type ApprovalModeInput,
  ApprovalModeInputSchema,
  approveSignal,
  approveUpdate,
  setApprovalModeUpdate,
} from '../shared/conversation-api';
import { signedApprovalModeText } from '../shared/signed-decisions';
import type { ConversationEntity } from './conversation-entity';
import type { CheckedSignature } from './decision-signatures';
import { setUpdateHandlerHeldOnReplay } from './held-on-replay';

/** How much each approval mode asks for: a change to a lower one is a decision. */
const MODE_STRICTNESS: Record<ApprovalModeInput['mode'], number> = { auto: 0, default: 1, ask: 2 };

/** A decision on a pending tool call (signal and update), and a change of the approval mode (update). */
export function installApprovalHandlers(self: ConversationEntity): void {
  const checkApproval = (input: unknown): ApprovalDecision => {
    const decision = self.parse(ApprovalDecisionSchema, input);
    self.approvals.check(decision);
    return decision;
  };
  const approve = (input: unknown) => self.approvals.apply(checkApproval(input));
  setHandler(approveSignal, (input) => self.signalled('approve', () => approve(input)));
  // Decisions for the calls of one model answer are all asked at once, and the next answer comes
  // only after every one of them is settled: nothing pending, no decision in the history applies yet.
  setUpdateHandlerHeldOnReplay(
    approveUpdate,
    approve,
    (input) => void checkApproval(input),
    () => self.approvals.pendingCount > 0,
  );

  const checkMode = (input: unknown) => {
    if (self.ending) throw new Error('the conversation is ending');
    const change = self.parse(ApprovalModeInputSchema, input);
    return { change, signature: checkLoosening(self, change) };
  };
  setHandler(
    setApprovalModeUpdate,
    async (input) => {
      // Until the worker's admission, its approver keys are unknown and a loosening would pass
      // unchecked: a change sent at once after the start waits for them, then is checked.
      let checked: ReturnType<typeof checkMode> | undefined;
      if (patched('mode-change-after-admission')) {
        await condition(() => self.workerRulesKnown);
        try {
          checked = checkMode(input);
        } catch (error) {
          // Refused after waiting: the update fails with why (a plain throw here would fail the task).
          throw ApplicationFailure.nonRetryable((error as Error).message, 'ApprovalModeRefused');
        }
      }
      const { change, signature } = checked ?? checkMode(input);
      self.changeApprovalMode(change.mode, signature);
      return { mode: change.mode };
    },
    { validator: (input) => void checkMode(input) },
  );
}

/**
 * A mode that asks for less than the current one is a decision, under the rules approvals follow:
 * by one of the conversation's approvers when it names some, signed where the worker names keys.
 * Asking for as much or more needs no one's say. Throws why the change does not count.
 */
function checkLoosening(self: ConversationEntity, change: ApprovalModeInput): CheckedSignature | undefined {
  const current = self.approvals.mode ?? 'default';
  if (MODE_STRICTNESS[change.mode] >= MODE_STRICTNESS[current]) return undefined;
  const approvers = self.approvals.approvers;
  if (!approvers && !self.signatures.required) return undefined;
  const by = change.by;
  if (by === undefined)
    throw new Error(
      `changing the approval mode from ${current} to ${change.mode} is a decision: name who makes it (by)`,
    );
  if (approvers && !approvers.includes(by))
    throw new Error(`${by} may not loosen the approval mode in this conversation`);
  return self.signatures.check({ ...change, by }, (expiresAt) =>
    signedApprovalModeText({ conversationId: self.conversationId, mode: change.mode, by, expiresAt }),
  );
}
