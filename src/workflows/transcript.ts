import type { TranscriptPage } from '../shared/conversation-api';
import type { Message } from '../shared/messages';
import type { TranscriptDelta } from '../shared/model-call';

export interface CarriedTranscript {
  messages: Message[];
  generation: number;
  sentToModel: number;
}

/**
 * The conversation's messages, append-only within a generation. Tracks how much of it the model
 * activity has already been sent, so each model call carries only what is new.
 */
export class Transcript {
  private readonly messages: Message[];
  private readonly generation: number;
  private sentToModel: number;

  /** Empty, or as handed over by continue-as-new (the worker's cache of it stays valid). */
  constructor(carried?: CarriedTranscript) {
    this.messages = carried ? [...carried.messages] : [];
    this.generation = carried?.generation ?? 0;
    this.sentToModel = carried?.sentToModel ?? 0;
  }

  carry(): CarriedTranscript {
    return { messages: this.all(), generation: this.generation, sentToModel: this.sentToModel };
  }

  get length(): number {
    return this.messages.length;
  }

  append(...messages: Message[]): void {
    this.messages.push(...messages);
  }

  all(): Message[] {
    return [...this.messages];
  }

  deltaForModel(conversationId: string): TranscriptDelta {
    return {
      conversationId,
      generation: this.generation,
      base: this.sentToModel,
      newMessages: this.messages.slice(this.sentToModel),
    };
  }

  /** Called once a model call with `delta` has succeeded: its worker has cached everything up to here. */
  markSent(delta: TranscriptDelta): void {
    this.sentToModel = delta.base + delta.newMessages.length;
  }

  page(request: { generation: number; from: number; to: number }, maxBytes: number): TranscriptPage {
    if (request.generation !== this.generation) {
      throw new Error(
        `transcript generation ${request.generation} is gone; the current one is ${this.generation}`,
      );
    }
    const to = Math.min(request.to, this.messages.length);
    const messages: Message[] = [];
    let bytes = 0;
    for (let index = Math.max(0, request.from); index < to; index++) {
      const message = this.messages[index]!;
      bytes += utf8Length(JSON.stringify(message));
      if (messages.length > 0 && bytes > maxBytes) return { messages, next: index };
      messages.push(message);
    }
    return { messages, next: null };
  }
}

/** UTF-8 byte length, by hand: workflow code has no Buffer. */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 4; // a surrogate pair: one four-byte character
      index++;
    } else bytes += 3;
  }
  return bytes;
}
