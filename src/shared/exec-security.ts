import { z } from 'zod';

/**
 * How freely `exec` runs commands (tool-system.md §10.3). `full`: any command bash accepts;
 * `safe-bin`: only allow-listed programs, in command lines simple enough to check completely. The
 * denylist of tool-call-lifecycle.md applies in both.
 */
export const ExecSecurityModeSchema = z.enum(['full', 'safe-bin']);
export type ExecSecurityMode = z.infer<typeof ExecSecurityModeSchema>;

const STRICTNESS: Record<ExecSecurityMode, number> = { full: 0, 'safe-bin': 1 };

/**
 * The worker's mode is a ceiling set by whoever runs the worker; a conversation may only ask for a
 * stricter one, since its options come from any client of the task queue.
 */
export function effectiveExecSecurity(
  worker: ExecSecurityMode,
  conversation: ExecSecurityMode | undefined,
): ExecSecurityMode {
  if (!conversation) return worker;
  return STRICTNESS[conversation] > STRICTNESS[worker] ? conversation : worker;
}
