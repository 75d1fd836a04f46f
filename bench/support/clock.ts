import { performance } from 'node:perf_hooks';

/** Milliseconds since the epoch with sub-millisecond resolution, comparable across processes on one machine. */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}
