import { randomBytes } from 'node:crypto';
import type { ModelTextDelta } from '../client/live-model-text';

/** One model call's text as it streams, for watchers in other processes. */
export interface LiveCallTap {
  /** Where a watcher reads the call's text as it arrives; undefined while no endpoint serves this process. */
  readonly url: string | undefined;
  /** The pin of the certificate the endpoint made itself, to be advertised beside the URL. */
  readonly pin: string | undefined;
  append(text: string): void;
  end(): void;
}

interface LiveCall {
  conversationId: string;
  call: string;
  text: string;
  ended: boolean;
  listeners: Set<(delta: ModelTextDelta | 'end') => void>;
}

/** How long an ended call's text stays readable: a watcher that found it late still gets it whole. */
export const ENDED_KEPT_MS = 5_000;

/**
 * The model calls running in this process, each readable by whoever holds its capability (a random
 * token in its URL). The URL goes only into the call's heartbeat details, so a watcher can read the
 * text exactly when it could read those details from Temporal: no new party learns anything.
 */
export class LiveModelCalls {
  private readonly calls = new Map<string, LiveCall>();
  /** Set by the endpoint serving this process: the base its URLs start with. */
  baseUrl: string | undefined;
  /** Set by that endpoint when it serves a certificate it made: its pin, which watchers check. */
  pin: string | undefined;

  open(conversationId: string, call: string): LiveCallTap {
    const token = randomBytes(18).toString('base64url');
    const live: LiveCall = { conversationId, call, text: '', ended: false, listeners: new Set() };
    this.calls.set(token, live);
    const url = this.baseUrl ? `${this.baseUrl}/model-text/${token}` : undefined;
    return {
      url,
      pin: url ? this.pin : undefined,
      append: (text) => {
        if (live.ended || !text) return;
        const delta = { conversationId, call, offset: live.text.length, text };
        live.text += text;
        for (const listener of live.listeners) listener(delta);
      },
      end: () => {
        if (live.ended) return;
        live.ended = true;
        for (const listener of live.listeners) listener('end');
        live.listeners.clear();
        setTimeout(() => this.calls.delete(token), ENDED_KEPT_MS).unref();
      },
    };
  }

  has(token: string): boolean {
    return this.calls.has(token);
  }

  /**
   * The call's text so far, then each delta as it comes, then 'end'; undefined for an unknown token.
   * Returns the function that stops listening.
   */
  follow(token: string, listener: (delta: ModelTextDelta | 'end') => void): (() => void) | undefined {
    const live = this.calls.get(token);
    if (!live) return undefined;
    if (live.text)
      listener({ conversationId: live.conversationId, call: live.call, offset: 0, text: live.text });
    if (live.ended) {
      listener('end');
      return () => {};
    }
    live.listeners.add(listener);
    return () => live.listeners.delete(listener);
  }
}

/** The one the model activities and the endpoint of this process share. */
export const processLiveModelCalls = new LiveModelCalls();
