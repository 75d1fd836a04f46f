import { defaultApprovalMode } from '../shared/approvals';
import type { ToolCategory, ToolDescriptor, ToolRetry } from '../shared/tool-descriptor';
import type { RegisteredTool } from './tool';

/** Timeouts by category; heartbeats only need to prove the worker is alive. */
const TIMEOUTS: Record<ToolCategory, { startToCloseTimeoutMs: number; heartbeatTimeoutMs: number }> = {
  files: { startToCloseTimeoutMs: 30_000, heartbeatTimeoutMs: 10_000 },
  search: { startToCloseTimeoutMs: 60_000, heartbeatTimeoutMs: 15_000 },
  commands: { startToCloseTimeoutMs: 300_000, heartbeatTimeoutMs: 20_000 },
  mcp: { startToCloseTimeoutMs: 120_000, heartbeatTimeoutMs: 30_000 },
  other: { startToCloseTimeoutMs: 60_000, heartbeatTimeoutMs: 15_000 },
};

/** Read-only tools retry freely; a tool with side effects runs once. */
const RETRY_IDEMPOTENT: ToolRetry = {
  maximumAttempts: 3,
  initialIntervalMs: 1_000,
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
  };
}
