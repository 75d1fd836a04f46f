import type { AgentEvent, NewAgentEvent } from '../shared/events';
import { workflowTime } from './workflow-time';

export interface CarriedEvents {
  events: AgentEvent[];
  lastSeq: number;
}

/** Ordered, bounded event log: sequence numbers keep rising while the oldest events are dropped. */
export class EventLog {
  private events: AgentEvent[];
  private nextSeq: number;
  private readonly listeners: Array<(event: AgentEvent) => void> = [];

  /** `carried`: the latest events of the previous run of a continued conversation; numbering goes on from them. */
  constructor(
    private readonly maxKept: number,
    carried?: CarriedEvents,
  ) {
    this.events = carried ? carried.events.slice(-maxKept) : [];
    this.nextSeq = (carried?.lastSeq ?? 0) + 1;
  }

  /** The newest `count` events and the sequence number to go on from. */
  carry(count: number): CarriedEvents {
    return { events: this.events.slice(-count), lastSeq: this.lastSeq };
  }

  record(run: number, event: NewAgentEvent): AgentEvent {
    const stamped = { ...event, seq: this.nextSeq++, at: workflowTime(), run } as AgentEvent;
    this.events.push(stamped);
    if (this.events.length > this.maxKept) this.events.splice(0, this.events.length - this.maxKept);
    for (const listener of this.listeners) listener(stamped);
    return stamped;
  }

  /** Called with every event recorded from now on, in the order the listeners were added. */
  onRecord(listener: (event: AgentEvent) => void): void {
    this.listeners.push(listener);
  }

  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  after(seq: number): AgentEvent[] {
    const firstNewer = this.events.findIndex((event) => event.seq > seq);
    return firstNewer === -1 ? [] : this.events.slice(firstNewer);
  }

  /** The newest kept event of `type`, if one is kept. */
  latest<T extends AgentEvent['type']>(type: T): Extract<AgentEvent, { type: T }> | undefined {
    for (let index = this.events.length - 1; index >= 0; index--) {
      const event = this.events[index]!;
      if (event.type === type) return event as Extract<AgentEvent, { type: T }>;
    }
    return undefined;
  }

  all(): AgentEvent[] {
    return [...this.events];
  }
}
