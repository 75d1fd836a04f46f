import { makeContinueAsNewFunc, patched, workflowInfo } from '@temporalio/workflow';
import { runHistoryIsLong } from './history-bound';
import { ConversationOptionsSchema } from '../shared/conversation-options';
import { DEFAULT_MAX_HISTORY_EVENTS, WORKFLOW_TASK_TIMEOUT_MS } from '../shared/workflow-task-bounds';
import type { ConversationInput } from './conversation-carry';
import type { ConversationEntity } from './conversation-entity';
import { knownKeysOnly } from './input-parsing';
import type { PausedRun } from './run-context';
import type { SpentMemo } from './spent-memo';

/**
 * When a conversation hands over to a fresh history (continue-as-new), and the hand-over itself:
 * once its history is long, or once the deployment's current build is not the one it runs on.
 */
export class HandOver {
  private readonly maxHistoryEvents: number | undefined;

  constructor(
    private readonly entity: ConversationEntity,
    /** What this execution was started with: its options are handed on. */
    private readonly input: ConversationInput,
    /** What the conversation has spent, kept in the next execution's memo. */
    private readonly spent: SpentMemo,
  ) {
    // Runs from before the default bound keep to what their options said, so their histories replay.
    this.maxHistoryEvents =
      entity.options.maxHistoryEvents ??
      (patched('bounded-history') ? DEFAULT_MAX_HISTORY_EVENTS : undefined);
  }

  /** The history is long enough to continue as new (Temporal's suggestion or `maxHistoryEvents`). */
  historyIsLong = (): boolean => runHistoryIsLong(this.maxHistoryEvents);

  /** The history is long, or a new build is current: the conversation hands over between two runs. */
  due(): boolean {
    // Never true on an unversioned worker, so histories recorded before versioning replay unchanged.
    return this.historyIsLong() || workflowInfo().targetWorkerDeploymentVersionChanged;
  }

  /** Hands the conversation (and the run paused between two turns, if any) to a fresh history. */
  async now(paused?: PausedRun): Promise<never> {
    await this.entity.deliveries.drain();
    // A mode changed by `setApprovalMode` goes on in the next execution; otherwise the options are
    // handed on as given, less keys a run from before strict inputs did not know (the next refuses them).
    const given = (
      this.entity.inputs.strict
        ? this.input.options
        : knownKeysOnly(ConversationOptionsSchema, this.input.options)
    ) as ConversationInput['options'];
    const handedOptions = this.entity.approvalModeChanged
      ? { ...given, approval: { ...given?.approval, mode: this.entity.approvals.mode } }
      : given;
    const memo = this.spent.forContinueAsNew();
    // The next execution starts on the deployment's current build, not pinned to this one; what it
    // is handed (the carried state) is the contract between builds.
    return makeContinueAsNewFunc<(input: ConversationInput) => Promise<unknown>>({
      initialVersioningBehavior: 'AUTO_UPGRADE',
      ...(memo ? { memo } : {}),
      // Also for a conversation a client started with Temporal's default.
      workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT_MS,
    })({
      options: handedOptions,
      carried: this.entity.carry(paused),
    });
  }
}
