import { type BackgroundProcessLimits, BackgroundProcesses } from './background-processes';
import { createExecTool } from './exec';
import { CommandPolicy, type ExecPolicySettings } from './exec-policy';
import { createProcessTool } from './process-tool';
import type { AgentTool } from './tool';

export interface RuntimeToolOptions extends ExecPolicySettings {
  /** Bounds on background processes; see BackgroundProcessLimits for the defaults. */
  backgroundLimits?: Partial<BackgroundProcessLimits>;
  /** Shared table of background processes; one per call when absent. Tests pass theirs to inspect it. */
  processes?: BackgroundProcesses;
}

/** `exec` and `process` (the `group:runtime` tools), sharing one table of background processes. */
export function createRuntimeTools(options: RuntimeToolOptions = {}): AgentTool[] {
  const processes = options.processes ?? new BackgroundProcesses(options.backgroundLimits);
  const policy = new CommandPolicy(options);
  return [createExecTool({ policy, processes }), createProcessTool(processes)] as AgentTool[];
}
