import type { Message } from '../shared/messages';

/** Remembered contexts at most; the oldest go first. */
const REMEMBERED = 5_000;

/**
 * What a waiting call's conversation said just before it (the last user message and the model's
 * words), read from the conversation once per call rather than on every refresh of the inbox: it
 * does not change while the call waits, and each read is a query the conversation's worker answers.
 */
export class DecisionContexts {
  private readonly known = new Map<string, readonly Message[]>();

  constructor(private readonly readTail: (conversationId: string) => Promise<readonly Message[]>) {}

  /** The context of the call `toolCallId` waiting in `conversationId`. */
  async of(conversationId: string, toolCallId: string): Promise<readonly Message[]> {
    const key = `${conversationId}\n${toolCallId}`;
    const remembered = this.known.get(key);
    if (remembered) return remembered;
    const tail = await this.readTail(conversationId);
    const context = tail.filter((message) => message.role !== 'toolResult').slice(-2);
    this.known.set(key, context);
    if (this.known.size > REMEMBERED) this.known.delete(this.known.keys().next().value!);
    return context;
  }
}
