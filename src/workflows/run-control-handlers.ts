import { setHandler } from '@temporalio/workflow';
import {
  AbortInputSchema,
  type SteerReceipt,
  type UserMessageInput,
  UserMessageInputSchema,
  abortSignal,
  abortUpdate,
  steerSignal,
  steerUpdate,
} from '../shared/conversation-api';
import { type ConversationEntity, userMessageOf } from './conversation-entity';
import { setUpdateHandlerHeldOnReplay } from './held-on-replay';
import { takenForAnother } from './taken-messages';

/**
 * Steer and abort, each as a signal and as an update: a steer interrupts the run in progress (or,
 * between runs, queues its message for the next); an abort ends the run in progress.
 */
export function installRunControlHandlers(self: ConversationEntity): void {
  const checkSteer = (input: unknown): UserMessageInput => {
    if (self.ending) throw new Error('the conversation is ending');
    const message = self.parse(UserMessageInputSchema, input);
    if (self.taken.check(message).kind === 'conflict') {
      throw new Error(takenForAnother(message.messageId));
    }
    return message;
  };
  const steer = (input: UserMessageInput): SteerReceipt => {
    // checkSteer refused a conflict: what is not new here is a repeat, answered and dropped.
    if (self.takeMessage(input, 'steering').kind !== 'new') {
      return { messageId: input.messageId, interrupting: false, duplicate: true };
    }
    const message = userMessageOf(input);
    const run = self.current;
    if (run) run.steer(message);
    else self.queue.push(message);
    return { messageId: message.messageId, interrupting: run !== undefined };
  };
  setHandler(steerSignal, (input) => self.signalled('steer', () => steer(checkSteer(input))));
  setHandler(steerUpdate, steer, { validator: (input) => void checkSteer(input) });

  const checkAbort = (input: unknown) => {
    const run = self.current;
    if (!run) throw new Error('no run is in progress');
    return { run, reason: self.parse(AbortInputSchema, input ?? {}) };
  };
  const abort = (input: unknown) => {
    const { run, reason } = checkAbort(input);
    run.abort(reason);
    return { run: run.run };
  };
  setHandler(abortSignal, (input) => self.signalled('abort', () => abort(input)));
  setUpdateHandlerHeldOnReplay(
    abortUpdate,
    abort,
    (input) => void checkAbort(input),
    () => self.current !== undefined,
  );
}
