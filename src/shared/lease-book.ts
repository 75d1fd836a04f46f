import type { LeaseBookState, LeaseOutcome, LeaseRequest, ModelLimits } from './model-limiter';

/** The first pause after a 429 without Retry-After; each further 429 after a pause doubles it. */
export const FIRST_THROTTLE_PAUSE_MS = 1_000;
export const LONGEST_THROTTLE_PAUSE_MS = 60_000;

export function emptyLeaseBook(limits: ModelLimits): LeaseBookState {
  return { limits, waiting: [], leases: [], pausedUntilMs: 0, pauseMs: 0, probing: false, nextGrantAtMs: 0 };
}

/**
 * Leases for one model endpoint (the limiter workflow's state; a worker also queues its own calls
 * with one before they ask the limiter): at most `maxConcurrent` held, granted at most `maxRps` a second,
 * none while a 429 pause lasts, and fairly: agents take turns, and within an agent its conversation
 * trees take turns, so 500 waiting calls of one tree and one call of another alternate. Pure: the
 * time is always passed in.
 */
export class LeaseBook {
  constructor(readonly state: LeaseBookState) {}

  adopt(limits: ModelLimits): void {
    this.state.limits = limits;
  }

  holds(ticket: string): boolean {
    return this.state.leases.some((lease) => lease.ticket === ticket);
  }

  isWaiting(ticket: string): boolean {
    return this.state.waiting.some((agent) => agent.trees.some((tree) => tree.tickets.includes(ticket)));
  }

  get waitingCount(): number {
    return this.state.waiting.reduce(
      (sum, agent) => sum + agent.trees.reduce((count, tree) => count + tree.tickets.length, 0),
      0,
    );
  }

  get heldCount(): number {
    return this.state.leases.length;
  }

  /** Queues the ticket behind its tree's others, unless it waits or holds a lease already. */
  ask(request: Pick<LeaseRequest, 'ticket' | 'agent' | 'tree'>): void {
    if (this.holds(request.ticket) || this.isWaiting(request.ticket)) return;
    let agent = this.state.waiting.find((queue) => queue.agent === request.agent);
    if (!agent) {
      agent = { agent: request.agent, trees: [] };
      this.state.waiting.push(agent);
    }
    let tree = agent.trees.find((queue) => queue.tree === request.tree);
    if (!tree) {
      tree = { tree: request.tree, tickets: [] };
      agent.trees.push(tree);
    }
    tree.tickets.push(request.ticket);
  }

  renew(ticket: string, nowMs: number): void {
    const lease = this.state.leases.find((held) => held.ticket === ticket);
    if (lease) lease.expiresAtMs = nowMs + this.state.limits.leaseTtlMs;
  }

  /** Gives up the ticket's lease or place; a 429 pauses every grant, a success ends the pausing. */
  release(ticket: string, outcome: LeaseOutcome, nowMs: number, retryAfterMs?: number): void {
    this.giveUp(ticket);
    if (outcome === 'ok') {
      this.state.pauseMs = 0;
      this.state.probing = false;
    } else if (outcome === 'rate_limited') {
      this.throttle(nowMs, retryAfterMs);
    }
  }

  /** Gives up the ticket's lease or place, saying nothing of how the call went. */
  giveUp(ticket: string): void {
    this.state.leases = this.state.leases.filter((lease) => lease.ticket !== ticket);
    this.withdraw(ticket);
  }

  /** Leases whose holders stopped renewing them come back. */
  expire(nowMs: number): void {
    this.state.leases = this.state.leases.filter((lease) => lease.expiresAtMs > nowMs);
  }

  /** Grants what may be granted now; returns the tickets granted. */
  grant(nowMs: number): string[] {
    const granted: string[] = [];
    while (this.mayGrant(nowMs)) {
      const ticket = this.nextTicket();
      if (!ticket) break;
      this.state.leases.push({ ticket, expiresAtMs: nowMs + this.state.limits.leaseTtlMs });
      granted.push(ticket);
      const { maxRps } = this.state.limits;
      if (maxRps) this.state.nextGrantAtMs = nowMs + 1_000 / maxRps;
    }
    return granted;
  }

  /** When something may change without a message arriving (a lease expiring, a pause ending); undefined when nothing waits. */
  wakeAtMs(nowMs: number): number | undefined {
    if (this.waitingCount === 0) return undefined;
    const times = [
      ...this.state.leases.map((lease) => lease.expiresAtMs),
      this.state.pausedUntilMs,
      this.state.nextGrantAtMs,
    ].filter((time) => time > nowMs);
    return times.length ? Math.min(...times) : undefined;
  }

  private mayGrant(nowMs: number): boolean {
    const { limits, leases } = this.state;
    if (limits.maxConcurrent !== undefined && leases.length >= limits.maxConcurrent) return false;
    if (nowMs < this.state.pausedUntilMs || nowMs < this.state.nextGrantAtMs) return false;
    return !this.state.probing || leases.length === 0;
  }

  /**
   * A 429 pauses grants for what Retry-After asked, or else for the last pause doubled (from
   * FIRST_THROTTLE_PAUSE_MS): doubled only by a 429 after the pause ended, not by the calls that were
   * already running when it began. After the pause one call probes the endpoint alone.
   */
  private throttle(nowMs: number, retryAfterMs: number | undefined): void {
    const pauseOver = nowMs >= this.state.pausedUntilMs;
    if (pauseOver) {
      this.state.pauseMs = this.state.pauseMs
        ? Math.min(this.state.pauseMs * 2, LONGEST_THROTTLE_PAUSE_MS)
        : FIRST_THROTTLE_PAUSE_MS;
    }
    const pause = retryAfterMs ?? this.state.pauseMs;
    this.state.pausedUntilMs = Math.max(this.state.pausedUntilMs, nowMs + pause);
    this.state.probing = true;
  }

  private withdraw(ticket: string): void {
    for (const agent of this.state.waiting) {
      for (const tree of agent.trees) tree.tickets = tree.tickets.filter((waiting) => waiting !== ticket);
      agent.trees = agent.trees.filter((tree) => tree.tickets.length > 0);
    }
    this.state.waiting = this.state.waiting.filter((agent) => agent.trees.length > 0);
  }

  /** The front agent's front tree's oldest ticket; both move to the back of their queues. */
  private nextTicket(): string | undefined {
    const agent = this.state.waiting.shift();
    if (!agent) return undefined;
    const tree = agent.trees.shift()!;
    const ticket = tree.tickets.shift()!;
    if (tree.tickets.length) agent.trees.push(tree);
    if (agent.trees.length) this.state.waiting.push(agent);
    return ticket;
  }
}
