/**
 * How a dead worker is found. Every running activity (model call or tool) heartbeats each second,
 * whatever it is doing, so one that misses its heartbeats for this long is taken for dead and its
 * step tried again elsewhere: the time a conversation stands still after its worker is killed is
 * about this plus the first retry interval and a second of the server's own. It tolerates a worker
 * whose event loop stalls for two seconds; the cost is one heartbeat RPC per second per running
 * activity, the same as with a longer timeout (docs/benchmarks/history.md, "8. Crash recovery").
 */
export const HEARTBEAT_TIMEOUT_MS = 3_000;

/** The first retry of a model call or tool waits this long, then doubles. */
export const FIRST_RETRY_INTERVAL_MS = 500;

/**
 * How long a model call that keeps failing for a passing reason (a provider's outage, rate limits,
 * workers killed under it) is tried again before its run ends with an error. Bounded by time, not
 * attempts: every lost worker costs an attempt, and a provider's outage lasts minutes, not tries.
 */
export const DEFAULT_MODEL_RETRY_MS = 30 * 60_000;

/**
 * How long a short read-only tool may run inside the workflow task of its conversation (a local
 * activity). A steer or abort reaches the workflow only once that task is done, so this bounds how
 * long one waits behind a local tool; a call that has not answered by then is cut off and runs as
 * an activity, which a steer reaches at once (a read-only tool may run again). A file read or a
 * directory listing takes a few milliseconds (20 ms the first time in a worker, under load).
 */
export const LOCAL_TOOL_ATTEMPT_MS = 100;
