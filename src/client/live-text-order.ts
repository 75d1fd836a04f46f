// Where live model text goes among a conversation's events, for the poller: text is passed on once,
// after the events that led to its model call and before that call's model_response.
import type { ActivityProgress } from '../shared/tool-run';
import type { PolledItem } from './conversation-poller';
import type { ModelTextDelta } from './live-model-text';

/** How much of each model call's text has been passed on, so live text and heartbeats never repeat it. */
export class ModelTextSeen {
  private readonly seen = new Map<string, number>();

  *fromLive(deltas: ModelTextDelta[]): Generator<PolledItem> {
    for (const delta of deltas) yield* this.pass(delta.call, delta.offset, delta.text, Date.now());
  }

  *fromHeartbeat(
    call: string,
    progress: Extract<ActivityProgress, { kind: 'model' }>,
    at: number,
  ): Generator<PolledItem> {
    const length = progress.textLength ?? progress.text.length;
    yield* this.pass(call, length - progress.text.length, progress.text, at);
  }

  private *pass(call: string, offset: number, text: string, at: number): Generator<PolledItem> {
    const seen = this.seen.get(call) ?? 0;
    const end = offset + text.length;
    if (end <= seen) return;
    const from = Math.max(seen, offset);
    this.seen.set(call, end);
    yield { kind: 'text', call, offset: from, text: text.slice(from - offset), at };
  }
}

/** One model activity, whatever its attempt: the part of a call key before `#`. */
const activityOf = (call: string) => call.slice(0, call.lastIndexOf('#'));

/**
 * Takes out of both lists (the first's deltas came first) those of the oldest model activity:
 * a conversation's model calls run one at a time.
 */
export function takeFirstCall(first: ModelTextDelta[], then: ModelTextDelta[]): ModelTextDelta[] {
  const oldest = first[0] ?? then[0];
  if (!oldest) return [];
  const activity = activityOf(oldest.call);
  const taken: ModelTextDelta[] = [];
  for (const list of [first, then]) {
    const rest = list.filter((delta) => activityOf(delta.call) !== activity);
    taken.push(...list.filter((delta) => activityOf(delta.call) === activity));
    list.splice(0, list.length, ...rest);
  }
  return taken;
}

/** Live deltas waiting to be passed on, and a way to sleep until one comes. */
export class LiveQueue {
  private deltas: ModelTextDelta[] = [];
  private wake: (() => void) | undefined;
  /** Model activities whose first text came after a look at the events, so their place is known. */
  private readonly anchored = new Set<string>();

  anchor(deltas: ModelTextDelta[]): void {
    for (const delta of deltas) this.anchored.add(activityOf(delta.call));
  }

  /** Deltas taken out too soon, back at the front. */
  putBack(deltas: ModelTextDelta[]): void {
    this.deltas.unshift(...deltas);
  }

  allAnchored(): boolean {
    return this.deltas.every((delta) => this.anchored.has(activityOf(delta.call)));
  }

  push(delta: ModelTextDelta): void {
    this.deltas.push(delta);
    this.wake?.();
  }

  drain(): ModelTextDelta[] {
    const deltas = this.deltas;
    this.deltas = [];
    return deltas;
  }

  /** Ends a wait at once. */
  interrupt(): void {
    this.wake?.();
  }

  /** Resolves after `ms`, or sooner when a delta is waiting. */
  wait(ms: number): Promise<void> {
    if (this.deltas.length) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }
}
