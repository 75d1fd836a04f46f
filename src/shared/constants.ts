export const DEFAULT_TASK_QUEUE = 'durable-agent';
export const CONVERSATION_WORKFLOW_TYPE = 'conversation';
export const DEFAULT_MAX_TOOL_ITERATIONS = 20;
/** Tool output handed to the model is cut to this many bytes. */
export const MAX_TOOL_RESULT_BYTES = 65_536;
/**
 * Room a tool that fills its result up to the limit leaves at its end for the note the runtime adds
 * (an interrupted call's, see finish-tool-result.ts), so the limit never cuts the end of the output.
 */
export const RESULT_NOTE_ROOM_BYTES = 2_048;
/** Events kept in workflow state; older ones are dropped (their sequence numbers stay unique). */
export const MAX_EVENTS_KEPT = 1_000;
/** Text kept in a `model_response` event; the full text is in the transcript. */
export const EVENT_TEXT_PREVIEW_CHARS = 2_000;
/** A transcript page returned by one query stays under this many bytes of JSON. */
export const TRANSCRIPT_PAGE_BYTES = 1_000_000;
/**
 * Arguments text kept in `tool_execution_start` and `approval_requested` events; the transcript and
 * the pending approval hold it whole. A reader that sees this many characters fetches the whole.
 */
export const EVENT_ARGUMENTS_CHARS = 2_000;
/**
 * The most an error message may take in an error result: the result limit less 16 KiB, kept for the
 * escapes of the JSON envelope around it.
 */
export const ERROR_MESSAGE_BYTES = MAX_TOOL_RESULT_BYTES - 16_384;
