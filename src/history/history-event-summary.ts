import type { Payload, PayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { int64, timestampMs } from './history-numbers';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

export interface HistoryEventSummary {
  eventId: number;
  /** As Temporal Core names it in nondeterminism errors: `ActivityTaskScheduled`, `TimerStarted`, … */
  type: string;
  at?: string;
  /** The event's attributes with payloads as their values (as far as `converter` can read them). */
  attributes: unknown;
}

/** The event with this id, for showing a person where replay went wrong. */
export function summarizeHistoryEvent(
  history: temporal.api.history.v1.IHistory,
  eventId: number,
  converter: PayloadConverter,
): HistoryEventSummary | undefined {
  const event = history.events?.find((candidate) => int64(candidate.eventId) === eventId);
  if (!event) return undefined;
  const attributesKey = Object.keys(event).find((key) => key.endsWith('Attributes'));
  const timeMs = timestampMs(event.eventTime);
  return {
    eventId,
    type: eventTypeName(event),
    ...(timeMs !== undefined ? { at: new Date(timeMs).toISOString() } : {}),
    attributes: attributesKey ? plain((event as Record<string, unknown>)[attributesKey], converter) : {},
  };
}

function eventTypeName(event: HistoryEvent): string {
  const name =
    typeof event.eventType === 'number'
      ? temporal.api.enums.v1.EventType[event.eventType]
      : String(event.eventType);
  return (name ?? 'unknown')
    .replace(/^EVENT_TYPE_/, '')
    .toLowerCase()
    .replace(/(^|_)([a-z])/g, (_match, _separator: string, letter: string) => letter.toUpperCase());
}

/** A JSON-friendly copy: payload lists become their values, int64s numbers, bytes their length, empty fields dropped. */
function plain(value: unknown, converter: PayloadConverter): unknown {
  if (value === null || value === undefined) return undefined;
  if (typeof value !== 'object') return value;
  if (ArrayBuffer.isView(value)) return `<${value.byteLength} bytes>`;
  if (Array.isArray(value)) return value.map((item) => plain(item, converter));
  if ('low' in value && 'high' in value && 'unsigned' in value) {
    const number = Number(String(value));
    return Number.isSafeInteger(number) ? number : String(value);
  }
  const fields = value as Record<string, unknown>;
  if (Array.isArray(fields.payloads)) {
    return (fields.payloads as Payload[]).map((payload) => {
      try {
        return converter.fromPayload(payload);
      } catch (error) {
        return `<unreadable payload: ${(error as Error).message}>`;
      }
    });
  }
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(fields)) {
    const field = plain(fields[key], converter);
    const empty =
      field === undefined || (typeof field === 'object' && field !== null && Object.keys(field).length === 0);
    if (!empty) copy[key] = field;
  }
  return copy;
}
