export const DEFAULT_TASK_QUEUE = 'durable-agent';
export const CONVERSATION_WORKFLOW_TYPE = 'conversation';
export const DEFAULT_MAX_TOOL_ITERATIONS = 20;
/** Tool output handed to the model is cut to this many bytes. */
export const MAX_TOOL_RESULT_BYTES = 65_536;
/** Events kept in workflow state; older ones are dropped (their sequence numbers stay unique). */
export const MAX_EVENTS_KEPT = 1_000;
/** Text kept in a `model_response` event; the full text is in the transcript. */
export const EVENT_TEXT_PREVIEW_CHARS = 2_000;
/** A transcript page returned by one query stays under this many bytes of JSON. */
export const TRANSCRIPT_PAGE_BYTES = 1_000_000;
