import { z } from 'zod';

/**
 * How freely `exec` runs commands. `full`: any command bash accepts, as the worker's user;
 * `sandbox`: any command, inside an OS sandbox (bubblewrap) where the workspace is the only writable
 * place and the host's other files, processes and network are out of sight; `safe-bin`: only
 * allow-listed programs and options, in command lines simple enough to check completely. The
 * command denylist applies in all three.
 */
export const ExecSecurityModeSchema = z.enum(['full', 'sandbox', 'safe-bin']);
export type ExecSecurityMode = z.infer<typeof ExecSecurityModeSchema>;

const STRICTNESS: Record<ExecSecurityMode, number> = { full: 0, sandbox: 1, 'safe-bin': 2 };

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
