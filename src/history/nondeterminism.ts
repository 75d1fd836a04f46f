/**
 * What a replay's nondeterminism error says, taken apart. The SDK's DeterminismViolationError wraps
 * Temporal Core's sentence, e.g. `[TMPRL1100] Nondeterminism error: No command scheduled for event
 * HistoryEvent(id: 18, ActivityTaskScheduled)`, inside a Rust debug dump of the failure.
 */
export interface Nondeterminism {
  /** Core's sentence, without the `[TMPRL1100] Nondeterminism error:` prefix. */
  detail: string;
  /** The history event replay stopped at, when the sentence names one. */
  eventId?: number;
  /** What history records there, e.g. `ActivityTaskScheduled`. */
  recorded?: string;
  /** What the current workflow code did instead, in words. */
  expected?: string;
}

const CORE_SENTENCE = /\[TMPRL1100\] Nondeterminism error:\s*((?:[^"\\]|\\.)*)/;
const HISTORY_EVENT = /HistoryEvent\(\s*(?:id:\s*(\d+),\s*)?([A-Za-z]+)/;
const NO_COMMAND = /^No command scheduled for event/;
const MACHINE = /^(.+?) machine does not handle this event/;
const MISMATCH =
  /^Activity (type|id) of scheduled event '([^']*)' does not match activity \1 of activity command '([^']*)'/;

/** Undefined when the message is not a nondeterminism error. */
export function parseNondeterminism(message: string): Nondeterminism | undefined {
  const sentence = CORE_SENTENCE.exec(message);
  if (!sentence) {
    if (!/nondeterminism/i.test(message)) return undefined;
    return { detail: message.trim() };
  }
  const detail = sentence[1]!.replace(/\\(.)/g, '$1').replace(/\s+/g, ' ').trim();
  const result: Nondeterminism = { detail };
  const event = HISTORY_EVENT.exec(detail);
  if (event) {
    if (event[1] !== undefined) result.eventId = Number(event[1]);
    result.recorded = event[2];
  }
  const machine = MACHINE.exec(detail);
  const mismatch = MISMATCH.exec(detail);
  if (NO_COMMAND.test(detail)) {
    result.expected = 'the workflow code issued no command here (it no longer does what history records)';
  } else if (machine) {
    const command = machine[1]!.toLowerCase();
    result.expected = `the workflow code issued ${/^[aeiou]/.test(command) ? 'an' : 'a'} ${command} command here`;
  } else if (mismatch) {
    result.recorded = `${mismatch[1] === 'type' ? 'activity' : 'activity id'} ${mismatch[2]}`;
    result.expected = `the workflow code scheduled ${mismatch[1] === 'type' ? 'activity' : 'activity id'} ${mismatch[3]}`;
  }
  return result;
}
