import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A new directory under the run's scratch directory (BENCH_SCRATCH_DIR, removed when the run ends). */
export function scratchDir(prefix: string): string {
  return mkdtempSync(path.join(process.env.BENCH_SCRATCH_DIR ?? os.tmpdir(), prefix));
}
