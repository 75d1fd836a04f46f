import { patched, upsertMemo } from '@temporalio/workflow';
import { type ConversationSpent, SPENT_MEMO } from '../shared/conversation-spent';

/** Executions from before the memo replay without its commands. */
const SPENT_MEMO_PATCH = 'spent-memo';

/**
 * Keeps the conversation's spending in its memo: one upsert as each run finishes (an event a run),
 * and handed to the next execution on continue-as-new, which starts without a memo otherwise.
 */
export class SpentMemo {
  private enabled: boolean | undefined;

  constructor(private readonly spent: () => ConversationSpent) {}

  runFinished(): void {
    if (this.on()) upsertMemo(this.memo());
  }

  /** The memo the next execution starts with; undefined before the first run or in older histories. */
  forContinueAsNew(): Record<string, unknown> | undefined {
    return this.spent().runs > 0 && this.on() ? this.memo() : undefined;
  }

  private memo(): Record<string, unknown> {
    return { [SPENT_MEMO]: this.spent() };
  }

  /** Asked once, where the first run finishes (or the execution hands over): the same point on replay. */
  private on(): boolean {
    this.enabled ??= patched(SPENT_MEMO_PATCH);
    return this.enabled;
  }
}
