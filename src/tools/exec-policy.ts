import { type ExecSecurityMode, effectiveExecSecurity } from '../shared/exec-security';
import { deniedCommandPattern } from './command-denylist';
import { DEFAULT_SAFE_BINS, assertSafeBinCommand } from './safe-bin';
import { ToolError } from './tool-error';
import type { Workspace } from './workspace';

/** What a worker lets `exec` run; set by whoever runs the worker (AGENT_EXEC_SECURITY, AGENT_EXEC_SAFE_BINS). */
export interface ExecPolicySettings {
  /** The most a conversation gets: it may ask for a stricter mode, never a looser one. Default `full`. */
  security?: ExecSecurityMode;
  /** The programs `safe-bin` mode allows; `DEFAULT_SAFE_BINS` when absent. */
  safeBins?: readonly string[];
}

/** Checks a command line before it runs: the denylist always, the safe-bin rules when they apply. */
export class CommandPolicy {
  readonly security: ExecSecurityMode;
  readonly safeBins: ReadonlySet<string>;

  constructor(settings: ExecPolicySettings = {}) {
    this.security = settings.security ?? 'full';
    this.safeBins = new Set(settings.safeBins ?? DEFAULT_SAFE_BINS);
  }

  /** Throws PermissionDenied when the command may not run in a conversation that asked for `requested`. */
  async check(command: string, requested: ExecSecurityMode | undefined, workspace: Workspace): Promise<void> {
    assertNotDenied(command);
    if (effectiveExecSecurity(this.security, requested) === 'safe-bin') {
      await assertSafeBinCommand(command, this.safeBins, workspace);
    }
  }

  /** A sentence for the tool's description, so the model knows the rules before it tries. */
  describe(): string {
    const denylist =
      'Commands matching the denylist (sudo, rm -rf /, mkfs, dd if=, fork bombs, shutdown, reboot, …) are refused.';
    if (this.security === 'full') return denylist;
    return `${denylist} This worker runs commands in safe-bin mode: only these programs, run by name, with no shell expansions, variables, subshells or output redirection to files, only the options each program is known to take safely (long options spelled out in full; a refusal names the options allowed), and only regular files and directories inside the workspace: ${[...this.safeBins].sort().join(', ')}.`;
  }
}

/** The denylist alone, for text that reaches a shell by other ways (a background process's stdin). */
export function assertNotDenied(text: string): void {
  const denied = deniedCommandPattern(text);
  if (denied) throw new ToolError('PermissionDenied', `command refused: it matches the denylist (${denied})`);
}
