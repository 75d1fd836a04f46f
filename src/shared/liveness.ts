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
