import { condition, setHandler } from '@temporalio/workflow';
import type { CompactionReceipt } from '../shared/compaction';
import { TRANSCRIPT_PAGE_BYTES } from '../shared/constants';
import {
  UserMessageInputSchema,
  compactUpdate,
  endSignal,
  eventsQuery,
  messageReceiptQuery,
  pendingApprovalsQuery,
  stateQuery,
  statusQuery,
  transcriptPageQuery,
  userMessageSignal,
} from '../shared/conversation-api';
import { installA2APushHandlers } from './a2a-push-handlers';
import { installApprovalHandlers } from './approval-handlers';
import { installClientToolHandlers } from './client-tool-handlers';
import { type ConversationEntity, userMessageOf } from './conversation-entity';
import { installRapHandlers } from './rap-handlers';
import { installRunControlHandlers } from './run-control-handlers';
import { takenForAnother } from './taken-messages';

/**
 * Every signal, update and query that reaches a conversation, registered in this order before the
 * workflow's first await. Steer, abort and approve come both as signals (for senders that only have
 * the Temporal CLI) and as updates whose validators refuse what the signal would ignore, so a
 * refused request never touches state or history.
 */
export function installHandlers(self: ConversationEntity): void {
  installMessageHandlers(self);
  installRunControlHandlers(self);
  installApprovalHandlers(self);
  installCompactionHandler(self);
  installQueryHandlers(self);
  installRapHandlers(self);
  installClientToolHandlers(self);
  installA2APushHandlers(self);
}

/**
 * A user's message, queued for the next run unless its id was taken before (a delivery repeated by
 * a retrying sender is dropped), and the request to end the conversation.
 */
function installMessageHandlers(self: ConversationEntity): void {
  setHandler(userMessageSignal, (message) => {
    const parsed = self.inputs.safeParse(UserMessageInputSchema, message);
    if (!parsed.success) {
      self.ignored('userMessage', parsed.error.message);
      return;
    }
    const intake = self.takeMessage(parsed.data, 'message');
    if (intake.kind === 'conflict') self.ignored('userMessage', takenForAnother(parsed.data.messageId));
    if (intake.kind === 'new') self.queue.push(userMessageOf(parsed.data));
  });
  setHandler(endSignal, () => self.requestEnd());
}

/** A forced compaction, answered with its receipt once it is done (at the next turn boundary or idle point). */
function installCompactionHandler(self: ConversationEntity): void {
  setHandler(
    compactUpdate,
    async () => {
      const ticket = self.compactionRequests.request();
      let receipt: CompactionReceipt | undefined;
      await condition(() => (receipt = self.compactionRequests.receiptAfter(ticket)) !== undefined);
      return receipt!;
    },
    {
      validator: () => {
        if (self.ending) throw new Error('the conversation is ending');
      },
    },
  );
}

/** What clients read: the status, the whole state, pending approvals, events, a page of the transcript. */
function installQueryHandlers(self: ConversationEntity): void {
  setHandler(statusQuery, () => self.summary());
  setHandler(messageReceiptQuery, (messageId) => self.taken.receipt(messageId) ?? null);
  setHandler(stateQuery, () => ({
    ...self.summary(),
    transcript: self.transcript.all(),
    events: self.events.all(),
    approvals: { pending: self.approvals.pendingApprovals(), standing: self.approvals.standingDecisions() },
  }));
  setHandler(pendingApprovalsQuery, () => self.approvals.pendingApprovals());
  setHandler(eventsQuery, (afterSeq) => self.events.after(afterSeq));
  setHandler(transcriptPageQuery, (request) => self.transcript.page(request, TRANSCRIPT_PAGE_BYTES));
}
