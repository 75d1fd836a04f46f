import type { PayloadConverter } from '@temporalio/common';
import type { ExecutionHistory } from '../history/build-timeline';
import { transcriptAtRun } from '../history/transcript-at-run';
import type { ForkCarried, ForkedFrom } from '../shared/conversation-api';
import { type ConversationOptionsInput, ConversationOptionsSchema } from '../shared/conversation-options';
import { schemaProblems } from '../shared/schema-problems';
import type { AgentClient } from './agent-client';

/** How a fork starts: the original's options then, its transcript at the end of the run, where it came from. */
export interface ForkStart {
  options: ConversationOptionsInput;
  carried: ForkCarried;
  forkedFrom: ForkedFrom;
}

/**
 * The start of a conversation that goes on from the end of run `atRun` of another (its histories
 * given oldest first, payloads decoded): only its transcript and run count are carried, which is
 * all a worker accepts from a client once it has checked them against the original's history.
 */
export function forkStart(
  conversationId: string,
  executions: ExecutionHistory[],
  atRun: number,
  converter: PayloadConverter,
  workspace?: string,
): ForkStart {
  const at = transcriptAtRun(conversationId, executions, atRun, converter);
  const forkedFrom: ForkedFrom = { conversationId, ...(at.runId ? { runId: at.runId } : {}), atRun };
  return {
    options: optionsOfOriginal(at.options, workspace),
    forkedFrom,
    carried: {
      transcript: { messages: at.messages, generation: 0, sentToModel: 0 },
      events: { events: [], lastSeq: 0 },
      standingApprovals: {},
      queue: [],
      runCount: atRun,
      endRequested: false,
      continuations: 0,
      forkedFrom,
    },
  };
}

/**
 * The original's options, as a top-level conversation of its own: a sub-agent's place in its tree
 * is not handed on (a client may not claim one), and `workspace` replaces its workspace (which may
 * be on another machine).
 */
export function optionsOfOriginal(recorded: unknown, workspace?: string): ConversationOptionsInput {
  const parsed = ConversationOptionsSchema.safeParse(recorded ?? {});
  if (!parsed.success) {
    throw new Error(`the original's options are not valid now: ${schemaProblems(parsed.error)}`);
  }
  const { ancestors: _ancestors, ...options } = parsed.data;
  return { ...options, ...(workspace !== undefined ? { workspace } : {}) };
}

/**
 * Starts the fork and waits for the worker's check of it (see AgentClient.admission): throws with
 * the worker's reason when refused; `untaken` when no worker took it yet.
 */
export async function startFork(
  agent: AgentClient,
  newId: string,
  start: Pick<ForkStart, 'options' | 'carried'>,
): Promise<{ untaken: boolean }> {
  await agent.startCarried(newId, start.options, { ...start.carried });
  const admission = await agent.admission(newId);
  if ('reason' in admission) throw new Error(`the fork ${newId} was refused: ${admission.reason}`);
  return { untaken: 'untaken' in admission };
}
