import type { AgentEvent, NewAgentEvent } from '../shared/events';
import { workflowTime } from './workflow-time';

/** Ordered, bounded event log: sequence numbers keep rising while the oldest events are dropped. */
export class EventLog {
  private events: AgentEvent[] = [];
  private nextSeq = 1;

  constructor(private readonly maxKept: number) {}

  record(run: number, event: NewAgentEvent): AgentEvent {
    const stamped = { ...event, seq: this.nextSeq++, at: workflowTime(), run } as AgentEvent;
    this.events.push(stamped);
    if (this.events.length > this.maxKept) this.events.splice(0, this.events.length - this.maxKept);
    return stamped;
  }

  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  after(seq: number): AgentEvent[] {
    const firstNewer = this.events.findIndex((event) => event.seq > seq);
    return firstNewer === -1 ? [] : this.events.slice(firstNewer);
  }

  all(): AgentEvent[] {
    return [...this.events];
  }
}
