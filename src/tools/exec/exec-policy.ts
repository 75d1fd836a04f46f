import { type ExecSecurityMode, effectiveExecSecurity } from '../../shared/exec-security';
import { DEFAULT_SANDBOX_SETTINGS, type SandboxSettings, sandboxAvailability } from './bubblewrap';
import { deniedCommandPattern } from './command-denylist';
import { DEFAULT_SAFE_BINS, assertSafeBinCommand } from './safe-bin';
import { ToolError } from '../tool-error';
import type { Workspace } from '../workspace';

/** What a worker lets `exec` run; set by whoever runs the worker (AGENT_EXEC_SECURITY, AGENT_EXEC_SAFE_BINS, AGENT_EXEC_SANDBOX_*). */
export interface ExecPolicySettings {
  /** What `sandbox` mode allows a command; DEFAULT_SANDBOX_SETTINGS when absent. */
  sandbox?: SandboxSettings;
  /** The most a conversation gets: it may ask for a stricter mode, never a looser one. Default `full`. */
  security?: ExecSecurityMode;
  /** The programs `safe-bin` mode allows; `DEFAULT_SAFE_BINS` when absent. */
  safeBins?: readonly string[];
}

/** Checks a command line before it runs: the denylist always, the safe-bin rules when they apply. */
export class CommandPolicy {
  readonly security: ExecSecurityMode;
  readonly safeBins: ReadonlySet<string>;
  readonly sandbox: SandboxSettings;

  constructor(settings: ExecPolicySettings = {}) {
    this.security = settings.security ?? 'full';
    this.safeBins = new Set(settings.safeBins ?? DEFAULT_SAFE_BINS);
    this.sandbox = settings.sandbox ?? DEFAULT_SANDBOX_SETTINGS;
  }

  /** The mode a conversation that asked for `requested` gets: the worker's, or a stricter one. */
  modeFor(requested: ExecSecurityMode | undefined): ExecSecurityMode {
    return effectiveExecSecurity(this.security, requested);
  }

  /**
   * Throws PermissionDenied when the command may not run in a conversation that asked for
   * `requested`; in sandbox mode also when no sandbox can be made here (never a silent full).
   */
  async check(command: string, requested: ExecSecurityMode | undefined, workspace: Workspace): Promise<void> {
    assertNotDenied(command);
    const mode = this.modeFor(requested);
    if (mode === 'safe-bin') await assertSafeBinCommand(command, this.safeBins, workspace);
    if (mode === 'sandbox') {
      const available = sandboxAvailability();
      if (!available.ok)
        throw new ToolError(
          'PermissionDenied',
          `command refused: sandbox mode is required but ${available.reason}`,
        );
    }
  }

  /**
   * The sandbox a command of a conversation that asked for `requested` runs in, if any: always in
   * `sandbox` mode; in `safe-bin` mode too where bubblewrap can run, because a checked path and the
   * program's own open of it are two steps, and a command beside it (in another conversation on the
   * same workspace) could swap a directory for a link between them: inside the sandbox there is
   * nothing outside the workspace to reach.
   */
  sandboxFor(requested: ExecSecurityMode | undefined): SandboxSettings | undefined {
    const mode = this.modeFor(requested);
    if (mode === 'sandbox') return this.sandbox;
    if (mode === 'safe-bin' && sandboxAvailability().ok) return this.sandbox;
    return undefined;
  }

  /** A sentence for the tool's description, so the model knows the rules before it tries. */
  describe(): string {
    const denylist =
      'Commands matching the denylist (sudo, rm -rf /, mkfs, dd if=, fork bombs, shutdown, reboot, …) are refused.';
    if (this.security === 'full') return denylist;
    if (this.security === 'sandbox')
      return `${denylist} This worker runs commands in a sandbox: only the workspace is writable (and a private /tmp), files outside it other than the system's programs are not there, ${this.sandbox.network ? 'the network is reachable' : 'there is no network'}, and each command is limited to ${this.sandbox.memoryMb} MiB of memory, ${this.sandbox.cpuSeconds} s of CPU, ${this.sandbox.processes} processes and threads, and a /tmp of ${this.sandbox.tmpMb} MiB.`;
    return `${denylist} This worker runs commands in safe-bin mode: only these programs, run by name, with no shell expansions, variables, subshells or output redirection to files, only the options each program is known to take safely (long options spelled out in full; a refusal names the options allowed), and only regular files and directories inside the workspace: ${[...this.safeBins].sort().join(', ')}.`;
  }
}

/** The denylist alone, for text that reaches a shell by other ways (a background process's stdin). */
export function assertNotDenied(text: string): void {
  const denied = deniedCommandPattern(text);
  if (denied) throw new ToolError('PermissionDenied', `command refused: it matches the denylist (${denied})`);
}
