import { LeaseBook, emptyLeaseBook } from '../shared/lease-book';
import type { LeaseRequest } from '../shared/model-limiter';

type QueuedRequest = Pick<LeaseRequest, 'ticket' | 'agent' | 'tree'>;

/**
 * The model calls of one worker that wait to ask the fleet's limiter: at most `asking` of them ask at
 * once, the others queue here, served by agent and tree in turn as the limiter serves them; and a
 * call of a tree that has none asking from this worker asks at once, `asking` more of those at most.
 * So the limiter holds a few waiting calls per worker, not every call of a tree of 500 sub-agents
 * (each would be an update in flight on one workflow, which the history service serialises), and a
 * lone conversation beside such a tree reaches the limiter without waiting behind it.
 */
export class WorkerLeaseQueue {
  private readonly book: LeaseBook;
  private readonly turns = new Map<string, () => void>();
  /** Tickets asking now, by whose they are (`fairnessOf`). */
  private readonly asking = new Map<string, string>();
  /** Tickets asking beyond the `asking` limit, as the first of their tree. */
  private readonly firstOfTree = new Set<string>();

  constructor(private readonly limit: number) {
    // No time to live, rate or pauses here: those are the limiter's.
    this.book = new LeaseBook(emptyLeaseBook({ maxConcurrent: limit, leaseTtlMs: Number.MAX_SAFE_INTEGER }));
  }

  /** Resolves when the ticket may ask the limiter; rejects (giving its place up) when `cancelled` fires first. */
  turn(request: QueuedRequest, cancelled: AbortSignal): Promise<void> {
    cancelled.throwIfAborted();
    const whose = fairnessOf(request);
    const treeAsks = [...this.asking.values()].includes(whose);
    const granted = new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        this.done(request.ticket);
        reject(cancelled.reason);
      };
      cancelled.addEventListener('abort', onAbort, { once: true });
      this.turns.set(request.ticket, () => {
        cancelled.removeEventListener('abort', onAbort);
        this.asking.set(request.ticket, whose);
        resolve();
      });
    });
    this.book.ask(request);
    this.serve();
    if (!this.asking.has(request.ticket) && !treeAsks && this.firstOfTree.size < this.limit) {
      this.book.giveUp(request.ticket);
      this.firstOfTree.add(request.ticket);
      this.turns.get(request.ticket)?.();
    }
    return granted;
  }

  /** The ticket has its answer from the limiter (or gave up): the next one in turn asks. */
  done(ticket: string): void {
    this.turns.delete(ticket);
    this.asking.delete(ticket);
    if (!this.firstOfTree.delete(ticket)) this.book.giveUp(ticket);
    this.serve();
  }

  private serve(): void {
    for (const ticket of this.book.grant(0)) this.turns.get(ticket)?.();
  }
}

function fairnessOf(request: QueuedRequest): string {
  return `${request.agent}\n${request.tree}`;
}
