import type { SandboxSettings } from './bubblewrap';
import { type CgroupSetting, commandCgroupsFor } from './command-cgroups';
import type { DiskLimits } from './disk-watchdog';
import type { RunLimits } from './shell-process';

/** What bounds every command in every mode; set by whoever runs the worker. */
export interface ExecLimitSettings {
  /** Where commands get a cgroup each (AGENT_EXEC_CGROUP): `auto`, `off` or a cgroup's path. */
  cgroup: CgroupSetting;
  /**
   * Tasks (processes and threads) at once per command in `full` and `safe-bin` mode
   * (AGENT_EXEC_PROCESSES); `sandbox` mode has its own, `SandboxSettings.processes`. Binds only
   * where the command has a cgroup with a pids controller.
   */
  processes: number;
  /** Disk a command may consume (AGENT_EXEC_DISK_MB, AGENT_EXEC_DISK_RESERVE_MB). */
  disk: DiskLimits;
}

export const DEFAULT_EXEC_LIMITS: ExecLimitSettings = {
  cgroup: 'auto',
  processes: 4_096,
  disk: { quotaMb: 2_048, reserveMb: 512 },
};

/** The limits of a command in the mode it runs in; the cgroups are made once per worker process. */
export function runLimitsFor(settings: ExecLimitSettings, sandbox: SandboxSettings | undefined): RunLimits {
  const { cgroups } = commandCgroupsFor(settings.cgroup);
  return {
    ...(cgroups ? { cgroups } : {}),
    processes: sandbox ? sandbox.processes : settings.processes,
    disk: settings.disk,
  };
}
