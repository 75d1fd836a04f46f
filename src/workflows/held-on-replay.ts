import type { UpdateDefinition } from '@temporalio/common';
import { CancellationScope, condition, setHandler, workflowInfo } from '@temporalio/workflow';

/**
 * Registers an update handler that, while replaying, is withdrawn whenever `canApply` is false, so
 * that an update the history accepted waits (unhandled updates are buffered by the SDK until the
 * activation ends) for the state it was accepted against.
 *
 * Why: a query answered while a workflow task is pending (its worker gone) replays events no task
 * has taken yet, and the answering worker keeps that state cached. An update validated there is
 * accepted after those events' commands. Replaying that task later, the SDK runs updates before the
 * task's other jobs: without the hold, the handler would find nothing to act on and fail the task on
 * every replay, and acceptance would come before the commands the history has first.
 *
 * `canApply` must be true whenever the live validator passes, so that a history accepted in the
 * ordinary order replays exactly as before: only states the validator refuses live hold an update.
 * Live, the handler is always registered.
 */
export function setUpdateHandlerHeldOnReplay<Ret, Args extends unknown[]>(
  update: UpdateDefinition<Ret, Args>,
  handler: (...args: Args) => Ret | Promise<Ret>,
  validator: (...args: Args) => void,
  canApply: () => boolean,
): void {
  const held = () => workflowInfo().unsafe.isReplaying && !canApply();
  const take = () => setHandler(update, handler, { validator });
  take();
  // Never cancelled: cancelling the conversation must not end the watch with an unhandled rejection.
  void CancellationScope.nonCancellable(async () => {
    for (;;) {
      await condition(held);
      setHandler(update, undefined);
      await condition(() => !held());
      take();
    }
  });
}
