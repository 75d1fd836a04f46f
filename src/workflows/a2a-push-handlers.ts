import { setHandler } from '@temporalio/workflow';
import { A2APushConfigChangeSchema, a2aPushConfigUpdate, a2aPushConfigsQuery } from '../shared/a2a-push';
import type { ConversationEntity } from './conversation-entity';

/**
 * A2A push notification configurations: changed by an update whose validator refuses what cannot
 * be done (a task the conversation never took, an ended conversation, too many configurations), so
 * a refused change never touches state or history; read by a query, one owner's at a time.
 */
export function installA2APushHandlers(self: ConversationEntity): void {
  setHandler(
    a2aPushConfigUpdate,
    (change) => self.push.change(self.parse(A2APushConfigChangeSchema, change)),
    {
      validator: (change) => {
        const parsed = self.parse(A2APushConfigChangeSchema, change);
        if (self.status === 'ended') throw new Error('the conversation has ended');
        if (parsed.op === 'set' && !self.taken.receipt(parsed.messageId))
          throw new Error(`the conversation has taken no message ${JSON.stringify(parsed.messageId)}`);
        const refusal = self.push.refusal(parsed);
        if (refusal) throw new Error(refusal);
      },
    },
  );
  setHandler(a2aPushConfigsQuery, (target) => self.push.configsOf(target.messageId, target.owner));
}
