import type { AgentClient, FollowItem, SendOptions } from '../../src/client/agent-client';
import { failIfAnyModelScriptThrew } from './scripted-model';

/**
 * Sends a message and follows the conversation until the run that took it finishes. An assertion
 * that failed inside a scripted model's reply callback meanwhile fails the caller here, with its
 * own message, rather than as whatever the failed model call led to.
 */
export async function ask(
  agent: AgentClient,
  conversationId: string,
  text: string,
  options: SendOptions = {},
) {
  const sent = await agent.send(conversationId, text, options);
  const seen: FollowItem[] = [];
  const follow = agent.follow(sent, 100);
  for (;;) {
    const next = await follow.next();
    if (next.done) {
      failIfAnyModelScriptThrew();
      return { finished: next.value, seen };
    }
    seen.push(next.value);
  }
}
