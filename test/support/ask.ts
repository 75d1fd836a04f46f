import type { AgentClient, FollowItem, SendOptions } from '../../src/runtime/agent-client';

/** Sends a message and follows the conversation until the run that took it finishes. */
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
    if (next.done) return { finished: next.value, seen };
    seen.push(next.value);
  }
}
