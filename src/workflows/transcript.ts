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
  private messages: Message[];
  private generation: number;
  private sentToModel: number;
  /** Estimated tokens of each message, kept alongside so the total costs nothing to ask. */
  private tokens: number[];
  private totalTokens: number;

  /** Empty, or as handed over by continue-as-new (the worker's cache of it stays valid). */
  constructor(carried?: CarriedTranscript) {
    this.messages = carried ? [...carried.messages] : [];
    this.generation = carried?.generation ?? 0;
    this.sentToModel = carried?.sentToModel ?? 0;
    this.tokens = this.messages.map(estimateTokens);
    this.totalTokens = sum(this.tokens);
  }

  /** Changes whenever compaction rewrites earlier messages; `transcriptPage` requests name it. */
  get currentGeneration(): number {
    return this.generation;
  }

  /** Characters / 4 over the messages' content: rough, but the same on every replay. */
  get estimatedTokens(): number {
    return this.totalTokens;
  }

  /**
   * Where compaction may cut: the start of a user message (so no tool call is ever separated from
   * its result), as early as keeps at most `keepTokens` after it, and never before the newest
   * user message. Undefined when there is nothing before that point worth summarising.
   */
  compactionPoint(keepTokens: number): number | undefined {
    let kept = 0;
    let point: number | undefined;
    for (let index = this.messages.length - 1; index > 0; index--) {
      kept += this.tokens[index]!;
      if (this.messages[index]!.role !== 'user') continue;
      if (point !== undefined && kept > keepTokens) break;
      point = index;
    }
    return point;
  }

  /** Replaces messages [0, upTo) by `summary`. A new generation: workers' caches of the old one are never used again. */
  compact(upTo: number, summary: Message): void {
    this.messages = [summary, ...this.messages.slice(upTo)];
    this.tokens = [estimateTokens(summary), ...this.tokens.slice(upTo)];
    this.totalTokens = sum(this.tokens);
    this.generation++;
    this.sentToModel = 0;
  }

  carry(): CarriedTranscript {
    return { messages: this.all(), generation: this.generation, sentToModel: this.sentToModel };
  }

  get length(): number {
    return this.messages.length;
  }

  append(...messages: Message[]): void {
    this.messages.push(...messages);
    for (const message of messages) {
      const tokens = estimateTokens(message);
      this.tokens.push(tokens);
      this.totalTokens += tokens;
    }
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

function estimateTokens(message: Message): number {
  return Math.ceil(JSON.stringify(message.content).length / 4);
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
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
