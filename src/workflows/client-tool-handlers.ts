import { setHandler } from '@temporalio/workflow';
import { ClientToolResultSchema } from '../shared/client-tools';
import { clientToolResultUpdate, pendingClientToolCallsQuery } from '../shared/conversation-api';
import type { ConversationEntity } from './conversation-entity';
import { setUpdateHandlerHeldOnReplay } from './held-on-replay';

/** A sender's result for one of its client tool calls (taken once), and the calls that wait for one. */
export function installClientToolHandlers(self: ConversationEntity): void {
  const check = (input: unknown) => self.clientCalls.check(self.parse(ClientToolResultSchema, input));
  setUpdateHandlerHeldOnReplay(
    clientToolResultUpdate,
    (input) => self.clientCalls.answer(self.parse(ClientToolResultSchema, input)),
    (input) => void check(input),
    () => self.clientCalls.waiting,
  );
  setHandler(pendingClientToolCallsQuery, () => self.clientCalls.pendingCalls());
}
