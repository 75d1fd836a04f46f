import type { MessageReceipt, UserMessageInput } from '../shared/conversation-api';
import { messageFingerprint } from '../shared/message-fingerprint';

/**
 * How many message ids a conversation remembers: a retry comes seconds or minutes after the first
 * delivery, so the latest ids are enough, and each costs about 130 bytes of what continue-as-new
 * carries.
 */
export const TAKEN_MESSAGES_REMEMBERED = 512;

/** Taken message ids and their receipts, oldest first, as continue-as-new hands them on. */
export type CarriedTakenMessages = Array<[messageId: string, receipt: MessageReceipt]>;

/** Why a message is refused (or, as a signal, ignored) when its id names another message taken before. */
export function takenForAnother(messageId: string): string {
  return `message id ${messageId} was taken before for another message`;
}

/** What taking a message found: it is new (and now remembered), or its id was taken before. */
export type Intake =
  | { kind: 'new' }
  | { kind: 'repeat'; receipt: MessageReceipt }
  | { kind: 'conflict'; receipt: MessageReceipt };

/**
 * The ids of the messages a conversation took (user messages, steering, the initial message), so a
 * message delivered twice is taken once, in a run, between runs and across continue-as-new. A repeat
 * of the same message is dropped quietly; another message under a taken id is a conflict. Executions
 * recorded before this memory existed (`enabled` false) take every delivery, as they did.
 */
export class TakenMessages {
  private readonly receipts: Map<string, MessageReceipt>;

  constructor(
    private readonly enabled: boolean,
    carried?: CarriedTakenMessages,
  ) {
    this.receipts = new Map(carried ?? []);
  }

  /** Takes `message` at `place` (where the event log and the run count stand), unless its id was taken. */
  take(message: UserMessageInput, place: Omit<MessageReceipt, 'fingerprint'>): Intake {
    if (!this.enabled) return { kind: 'new' };
    const fingerprint = messageFingerprint(message);
    const earlier = this.receipts.get(message.messageId);
    if (earlier) {
      return earlier.fingerprint === fingerprint
        ? { kind: 'repeat', receipt: earlier }
        : { kind: 'conflict', receipt: earlier };
    }
    this.receipts.set(message.messageId, { fingerprint, ...place });
    for (const oldest of this.receipts.keys()) {
      if (this.receipts.size <= TAKEN_MESSAGES_REMEMBERED) break;
      this.receipts.delete(oldest);
    }
    return { kind: 'new' };
  }

  /** What `take` would find for a message with this id and content, without taking it. */
  check(message: UserMessageInput): Intake {
    const earlier = this.enabled ? this.receipts.get(message.messageId) : undefined;
    if (!earlier) return { kind: 'new' };
    return earlier.fingerprint === messageFingerprint(message)
      ? { kind: 'repeat', receipt: earlier }
      : { kind: 'conflict', receipt: earlier };
  }

  receipt(messageId: string): MessageReceipt | undefined {
    return this.receipts.get(messageId);
  }

  /** Absent where nothing is remembered, so executions before this memory carry what they did. */
  carry(): CarriedTakenMessages | undefined {
    return this.enabled ? [...this.receipts] : undefined;
  }
}
