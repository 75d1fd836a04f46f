import type { BudgetUsage } from '../shared/budget';
import type { RunFinishedOutcome } from '../shared/events';
import { allHandlersFinished, condition, patched } from '@temporalio/workflow';
import { DEFAULT_AGENT_ID } from '../shared/agent-id';
import { noticeActivities } from './activity-proxies';
import { betweenRuns } from './between-runs';
import type { CarriedConversation, ConversationInput } from './conversation-carry';
import { ConversationEntity, userMessageOf } from './conversation-entity';
import { installHandlers } from './conversation-handlers';
import { ConversationMetrics } from './conversation-metrics';
import { type FinishedRun, oneRun } from './conversation-run';
import { admit, checkedStart } from './conversation-start';
import { ConversationVisibility } from './conversation-visibility';
import { HandOver } from './hand-over';
import { SpentMemo } from './spent-memo';
import { InputParsing } from './input-parsing';
import type { PausedRun } from './run-context';

export type { CarriedConversation, ConversationInput } from './conversation-carry';

export interface ConversationResult {
  runs: number;
  messages: number;
  endedBy: 'end' | 'idle_timeout' | 'first_run';
  /** How the last run ended and its answer: what a sub-agent's parent reads. */
  outcome?: RunFinishedOutcome;
  answer?: string;
  /** Why the model's provider refused, when the last run's outcome is `refused` and it said. */
  refusal?: string;
  /** Tokens and tool calls the conversation spent, its sub-agents' included: what a parent counts in its budget. */
  usage?: BudgetUsage;
}

/** How the conversation ended, and how its last run finished. */
interface Ending {
  endedBy: ConversationResult['endedBy'];
  lastRun: FinishedRun;
}

/**
 * One conversation, for as long as it lasts: idle between runs, a run per user message (messages
 * that arrive during a run queue and are taken together by the next run), ended by `end` or
 * after `idleTimeoutMs` without a message. Its state is the ConversationEntity, its handlers are
 * registered by `installHandlers`; this is the loop that waits, runs and hands over.
 *
 * On versioned workers each execution is pinned to the build it started on, and hands over to the
 * deployment's current build between two runs once Temporal says that build has changed: a run
 * (and a pending approval in it) finishes on the code that began it, and the next starts on the
 * new code with a fresh history.
 */
export async function conversation(input: ConversationInput = {}): Promise<ConversationResult> {
  const inputs = new InputParsing(patched('strict-inputs'));
  const { options, initialMessage } = checkedStart(input, inputs);
  const { carried } = input;
  const self = new ConversationEntity(options, carried, inputs);
  // Before any signal: a scheduled conversation's prompt comes first. Never carried by continue-as-new.
  if (initialMessage && self.takeMessage(initialMessage, 'message').kind === 'new') {
    self.queue.push(userMessageOf(initialMessage));
  }
  installHandlers(self);
  const spent = new SpentMemo(() => ({ runs: self.runCount, ...self.budget.status().used }));
  const handOver = new HandOver(self, input, spent);
  const searchAttributes = await admit(self, carried);
  observeEvents(self, searchAttributes, carried, spent);
  const ending = await runsUntilEnd(self, handOver, carried?.paused);
  return ended(self, ending);
}

/** The Web UI's view of the conversation, its spending memo and its metrics follow its events from here on. */
function observeEvents(
  self: ConversationEntity,
  searchAttributes: boolean,
  carried: CarriedConversation | undefined,
  spent: SpentMemo,
): void {
  const visibility = new ConversationVisibility(
    searchAttributes ? { agentId: self.options.agentId ?? DEFAULT_AGENT_ID } : undefined,
  );
  visibility.start(carried?.paused?.run);
  self.events.onRecord((event) => visibility.eventRecorded(event));
  self.events.onRecord((event) => {
    if (event.type === 'run_finished') spent.runFinished();
  });
  const metrics = new ConversationMetrics();
  self.events.onRecord((event) => metrics.eventRecorded(event));
}

/**
 * Runs until the conversation ends; a hand-over to a fresh history ends this execution from inside.
 * The run the previous execution paused between two turns (`paused`) goes on before anything else.
 */
async function runsUntilEnd(
  self: ConversationEntity,
  handOver: HandOver,
  paused: PausedRun | undefined,
): Promise<Ending> {
  let lastRun: FinishedRun = {};
  // The outer loop: idle until there is work, then one run (or a compaction asked for while idle).
  for (let resumed = paused; ; resumed = undefined) {
    if (!resumed) {
      const next = await betweenRuns(self, handOver);
      if (next === 'compacted') continue;
      if (next !== 'run') return { endedBy: next, lastRun };
    }
    lastRun = (await oneRun(self, handOver, resumed)) ?? lastRun;
    if (self.options.endAfterFirstRun) return { endedBy: 'first_run', lastRun };
  }
}

/** The conversation is over: the tool servers and webhooks are told, handlers finish, the result. */
async function ended(self: ConversationEntity, { endedBy, lastRun }: Ending): Promise<ConversationResult> {
  self.end();
  const tools = self.tools;
  if (tools && [...tools.values()].some((tool) => tool.asyncCompletion)) {
    // The tool servers may let go of what they kept for this conversation.
    await noticeActivities
      .sendRapNotice({ kind: 'close_thread', conversationId: self.conversationId })
      .catch(() => undefined);
  }
  self.outbox?.ended({ endedBy, runs: self.runCount, ...lastRun });
  self.push.conversationEnded();
  await self.deliveries.drain();
  await condition(allHandlersFinished);
  return {
    runs: self.runCount,
    messages: self.transcript.length,
    endedBy,
    ...lastRun,
    usage: self.budget.status().used,
  };
}
