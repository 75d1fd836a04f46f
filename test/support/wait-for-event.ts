import { type WorkflowHandle, defaultPayloadConverter } from '@temporalio/client';
import { eventsQuery } from '../../src/shared/conversation-api';
import type { AgentEvent, AgentEventType } from '../../src/shared/events';
import { waitFor } from './test-worker';

type EventOf<T extends AgentEventType> = Extract<AgentEvent, { type: T }>;

/** Waits until the conversation has recorded an event of `type` that matches; returns it. */
export function waitForEvent<T extends AgentEventType>(
  handle: WorkflowHandle,
  type: T,
  matches: (event: EventOf<T>) => boolean = () => true,
): Promise<EventOf<T>> {
  return waitFor(async () => {
    const events = await handle.query(eventsQuery, 0);
    return events.find((event): event is EventOf<T> => event.type === type && matches(event as EventOf<T>));
  }, `a ${type} event`);
}

export async function eventsOf(handle: WorkflowHandle): Promise<AgentEvent[]> {
  return handle.query(eventsQuery, 0);
}

/** Waits until a running activity has heartbeated details matching `matches` (seen through describe()). */
export function waitForHeartbeat(
  handle: WorkflowHandle,
  matches: (details: unknown) => boolean,
): Promise<unknown> {
  return waitFor(async () => {
    const description = await handle.describe();
    for (const activity of description.raw.pendingActivities ?? []) {
      const payload = activity.heartbeatDetails?.payloads?.[0];
      if (!payload) continue;
      const details = defaultPayloadConverter.fromPayload<unknown>(payload);
      if (matches(details)) return details;
    }
    return undefined;
  }, 'a heartbeat');
}
