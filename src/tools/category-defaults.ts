import { defaultApprovalMode } from '../shared/approvals';
import { FIRST_RETRY_INTERVAL_MS, HEARTBEAT_TIMEOUT_MS } from '../shared/liveness';
import type { ToolCategory, ToolDescriptor, ToolRetry } from '../shared/tool-descriptor';
import { type RegisteredTool, runsOnWorker } from './tool';

/**
 * Timeouts by category. Heartbeats only prove the worker is alive (the tool activity beats each
 * second whatever the tool does), so their timeout is the same for all.
 */
const TIMEOUTS: Record<ToolCategory, { startToCloseTimeoutMs: number; heartbeatTimeoutMs: number }> = {
  files: { startToCloseTimeoutMs: 30_000, heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS },
  search: { startToCloseTimeoutMs: 60_000, heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS },
  commands: { startToCloseTimeoutMs: 300_000, heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS },
  mcp: { startToCloseTimeoutMs: 120_000, heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS },
  other: { startToCloseTimeoutMs: 60_000, heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS },
};

/** Read-only tools retry freely; a tool with side effects runs once. */
const RETRY_IDEMPOTENT: ToolRetry = {
  maximumAttempts: 3,
  initialIntervalMs: FIRST_RETRY_INTERVAL_MS,
  backoffCoefficient: 2,
  maximumIntervalMs: 10_000,
};
const RETRY_ONCE: ToolRetry = { ...RETRY_IDEMPOTENT, maximumAttempts: 1 };

export function describeTool(tool: RegisteredTool): ToolDescriptor {
  const defaults = TIMEOUTS[tool.category];
  return {
    name: tool.name,
    label: tool.label,
    category: tool.category,
    idempotent: tool.idempotent,
    startToCloseTimeoutMs: tool.startToCloseTimeoutMs ?? defaults.startToCloseTimeoutMs,
    heartbeatTimeoutMs: tool.heartbeatTimeoutMs ?? defaults.heartbeatTimeoutMs,
    retry: { ...(tool.idempotent ? RETRY_IDEMPOTENT : RETRY_ONCE), ...tool.retry },
    risk: tool.risk,
    approval: tool.approval ?? defaultApprovalMode(tool.risk),
    ...(tool.ownerOnly ? { ownerOnly: true } : {}),
    ...(tool.asyncCompletion ? { asyncCompletion: true } : {}),
    ...(tool.hostsWithoutApproval ? { hostsWithoutApproval: [...tool.hostsWithoutApproval] } : {}),
    ...(tool.workerBound ? { boundToWorkerBy: tool.workerBound.idParameter } : {}),
    ...(runsLocally(tool) ? { local: true } : {}),
  };
}

/** Only a read-only tool that answers on this worker, now, may run inside a workflow task. */
function runsLocally(tool: RegisteredTool): boolean {
  return (
    tool.local === true && tool.idempotent && !tool.asyncCompletion && !tool.workerBound && runsOnWorker(tool)
  );
}
