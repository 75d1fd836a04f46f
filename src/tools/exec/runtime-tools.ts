import { type BackgroundProcessLimits, BackgroundProcesses } from './background-processes';
import { childEnvironment } from './child-environment';
import { createExecTool } from './exec';
import { DEFAULT_EXEC_LIMITS, type ExecLimitSettings } from './exec-limits';
import { CommandPolicy, type ExecPolicySettings } from './exec-policy';
import { createProcessTool } from './process-tool';
import type { AgentTool } from '../tool';

export interface RuntimeToolOptions extends ExecPolicySettings {
  /** Bounds on background processes; see BackgroundProcessLimits for the defaults. */
  backgroundLimits?: Partial<BackgroundProcessLimits>;
  /** Shared table of background processes; one per call when absent. Tests pass theirs to inspect it. */
  processes?: BackgroundProcesses;
  /**
   * The whole environment every command starts with, built by `childEnvironment` at the worker's
   * edge. When absent, the base variables of this process's environment and nothing else.
   */
  childEnv?: Readonly<Record<string, string>>;
  /** What bounds every command (cgroup, process limit, disk); `DEFAULT_EXEC_LIMITS` for what is absent. */
  limits?: Partial<ExecLimitSettings>;
}

/** `exec` and `process` (the `group:runtime` tools), sharing one table of background processes. */
export function createRuntimeTools(options: RuntimeToolOptions = {}): AgentTool[] {
  const processes = options.processes ?? new BackgroundProcesses(options.backgroundLimits);
  const policy = new CommandPolicy(options);
  const env = options.childEnv ?? childEnvironment(process.env);
  const limits = { ...DEFAULT_EXEC_LIMITS, ...options.limits };
  return [createExecTool({ policy, processes, env, limits }), createProcessTool(processes)] as AgentTool[];
}
