import type { Message } from '../shared/messages';

/**
 * Transcripts the model activity has already seen, per conversation and generation, so a model call
 * needs only the new messages. Least recently used conversations are dropped past `maxConversations`.
 */
export class TranscriptCache {
  private readonly entries = new Map<string, Message[]>();

  constructor(private readonly maxConversations = 1_000) {}

  /** The first `length` messages, if this worker has them. */
  prefix(conversationId: string, generation: number, length: number): Message[] | undefined {
    const key = `${conversationId}\u0000${generation}`;
    const cached = this.entries.get(key);
    if (!cached || cached.length < length) return undefined;
    this.entries.delete(key);
    this.entries.set(key, cached);
    return cached.length === length ? cached : cached.slice(0, length);
  }

  store(conversationId: string, generation: number, messages: Message[]): void {
    const key = `${conversationId}\u0000${generation}`;
    this.entries.delete(key);
    this.entries.set(key, messages);
    while (this.entries.size > this.maxConversations) {
      this.entries.delete(this.entries.keys().next().value!);
    }
  }
}
