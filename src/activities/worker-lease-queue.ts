import { LeaseBook, emptyLeaseBook } from '../shared/lease-book';
import type { LeaseRequest } from '../shared/model-limiter';

/**
 * The model calls of one worker that wait to ask the fleet's limiter: at most `asking` of them ask at
 * once, the others queue here, served by agent and tree in turn as the limiter serves them. So the
 * limiter holds a few waiting calls per worker, not every call of a tree of 500 sub-agents (each
 * would be an update in flight on one workflow, which the history service serialises), and a call
 * of another tree is at most `asking` calls behind on its own worker.
 */
export class WorkerLeaseQueue {
  private readonly book: LeaseBook;
  private readonly turns = new Map<string, () => void>();

  constructor(asking: number) {
    // No time to live, rate or pauses here: those are the limiter's.
    this.book = new LeaseBook(emptyLeaseBook({ maxConcurrent: asking, leaseTtlMs: Number.MAX_SAFE_INTEGER }));
  }

  /** Resolves when the ticket may ask the limiter; rejects (giving its place up) when `cancelled` fires first. */
  turn(request: Pick<LeaseRequest, 'ticket' | 'agent' | 'tree'>, cancelled: AbortSignal): Promise<void> {
    cancelled.throwIfAborted();
    const granted = new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.done(request.ticket);
        reject(cancelled.reason);
      };
      cancelled.addEventListener('abort', onAbort, { once: true });
      this.turns.set(request.ticket, () => {
        cancelled.removeEventListener('abort', onAbort);
        resolve();
      });
    });
    this.book.ask(request);
    this.serve();
    return granted;
  }

  /** The ticket has its answer from the limiter (or gave up): the next one in turn asks. */
  done(ticket: string): void {
    this.turns.delete(ticket);
    this.book.giveUp(ticket);
    this.serve();
  }

  private serve(): void {
    for (const ticket of this.book.grant(0)) this.turns.get(ticket)?.();
  }
}
