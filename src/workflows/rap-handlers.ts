import { ActivityFailure, ApplicationFailure, setHandler } from '@temporalio/workflow';
import {
  answerUserChoiceUpdate,
  rapMessageSignal,
  rapSubscriptionsQuery,
  rapViewsQuery,
} from '../shared/conversation-api';
import { RapConversationMessageSchema, UserChoiceAnswerSchema } from '../shared/rap';
import { noticeActivities } from './activity-proxies';
import type { ConversationEntity } from './conversation-entity';

/**
 * What RAP tool servers send the conversation (subscription events, views, user choices), what
 * clients read of its subscriptions and views, and a person's answer to a choice, sent on to the tool.
 */
export function installRapHandlers(self: ConversationEntity): void {
  setHandler(rapMessageSignal, (message) => {
    const parsed = RapConversationMessageSchema.safeParse(message);
    if (!parsed.success) {
      self.ignored('rapMessage', parsed.error.message);
      return;
    }
    if (self.status === 'ended') return;
    self.rap.receive(parsed.data, self.runCount);
  });
  setHandler(rapSubscriptionsQuery, () => self.rap.activeSubscriptions());
  setHandler(rapViewsQuery, () => self.rap.viewContents());
  setHandler(
    answerUserChoiceUpdate,
    async (answer) => {
      const { responseUrl, selected, undo } = self.rap.takeChoice(answer, self.runCount);
      try {
        await noticeActivities.sendRapNotice({
          kind: 'user_choice_response',
          responseUrl,
          toolCallId: answer.toolCallId,
          selected,
        });
      } catch (error) {
        const why = error instanceof ActivityFailure && error.cause ? error.cause.message : String(error);
        undo(why);
        throw ApplicationFailure.nonRetryable(`the choice could not be sent to the tool: ${why}`);
      }
      self.rap.choiceSent(answer, selected, self.runCount);
      return { selected };
    },
    {
      validator: (answer) => {
        const parsed = UserChoiceAnswerSchema.safeParse(answer);
        if (!parsed.success) throw new Error(`invalid answer: ${parsed.error.message}`);
        self.rap.checkChoice(parsed.data);
      },
    },
  );
}
