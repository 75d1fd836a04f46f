import type { ConversationStartInput, ForkedFrom } from '../shared/conversation-api';
import type { CarriedPart } from '../shared/worker-floors';
import type { UserMessage } from '../shared/messages';
import type { StandingDecisions } from './approval-book';
import type { CarriedBudget } from './conversation-budget';
import type { UsedSignatures } from './decision-signatures';
import type { CarriedA2APush } from './a2a-push-book';
import type { CarriedEvents } from './event-log';
import type { CarriedRapThread } from './rap-thread';
import type { CarriedTakenMessages } from './taken-messages';
import type { CarriedTranscript } from './transcript';
import type { PausedRun } from './run-context';

export interface ConversationInput extends ConversationStartInput {
  /** Handed over by the previous run of this conversation when it continued as new. */
  carried?: CarriedConversation;
}

/** Everything a conversation needs to go on in a fresh history. */
export interface CarriedConversation {
  transcript: CarriedTranscript;
  events: CarriedEvents;
  standingApprovals: StandingDecisions;
  /** Messages that arrived while idle or during the hand-over, not yet taken by a run. */
  queue: UserMessage[];
  runCount: number;
  endRequested: boolean;
  /** How many times the conversation has continued as new before this run. */
  continuations: number;
  /** RAP subscriptions, their waiting events and views; absent in runs from before RAP. */
  rap?: CarriedRapThread;
  /** A run that was paused between two turns to continue as new; it resumes first. */
  paused?: PausedRun;
  /** Signed decisions taken and not yet expired, so none counts twice; absent before signed decisions. */
  usedSignatures?: UsedSignatures;
  /** Spending, the budget as raised, and the conversation's start; absent in runs from before budgets. */
  budget?: CarriedBudget;
  /** The ids of the latest messages taken, so a repeat is dropped after the hand-over too; absent before that memory. */
  takenMessages?: CarriedTakenMessages;
  /** A2A push notification configurations of tasks, and what each was sent; absent when there are none. */
  a2aPush?: CarriedA2APush;
  /**
   * Set on a conversation started by `fork` (its transcript is another conversation's up to a run)
   * and handed on by its continue-as-new; absent otherwise.
   */
  forkedFrom?: ForkedFrom;
}

/**
 * The worker's admission knows carried parts by name (CARRIED_PARTS, for AGENT_ACCEPT_CARRIED): a
 * part added here without its name there does not compile, so none escapes the floor check.
 */
type UnnamedCarriedParts = Exclude<keyof CarriedConversation, CarriedPart>;
export const everyCarriedPartNamed: [UnnamedCarriedParts] extends [never] ? true : UnnamedCarriedParts = true;
