/**
 * How long a streamed model call waits before giving up on the endpoint and trying again (a new
 * attempt of the activity): for its first token, and for the next piece once it is streaming. An
 * endpoint that accepted the request and then went quiet would otherwise hold the call until the
 * activity's 10-minute timeout, heartbeating all the while.
 */
export interface ModelStreamTimeouts {
  firstTokenMs: number;
  idleMs: number;
}

export const DEFAULT_MODEL_STREAM_TIMEOUTS: ModelStreamTimeouts = {
  // Reasoning models can think for a while before their first token.
  firstTokenMs: 180_000,
  idleMs: 60_000,
};
