import type { AgentClient, RunToFollow, SendOptions } from '../../src/client/agent-client';
import type { RunFinishedEvent } from '../../src/client/run-end';
import type { AgentEvent } from '../../src/shared/events';
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
  return followToEnd(agent, sent);
}

/**
 * Follows a run to its end with `agent.followRun` (polling every 100 ms): its `run_finished` and
 * every event on the way (tool progress as `tool_execution_update`, model text as `model_text`).
 * Fails when the run did not finish.
 */
export async function followToEnd(
  agent: AgentClient,
  run: RunToFollow,
): Promise<{ finished: RunFinishedEvent; seen: AgentEvent[] }> {
  const seen: AgentEvent[] = [];
  const follow = agent.followRun(run, { pollMs: 100 });
  for (;;) {
    const next = await follow.next();
    if (!next.done) {
      seen.push(next.value);
      continue;
    }
    failIfAnyModelScriptThrew();
    if (next.value.how !== 'finished') {
      throw new Error(
        `conversation ${run.conversationId} ended before the run finished: ${JSON.stringify(next.value)}`,
      );
    }
    return { finished: next.value.event, seen };
  }
}
