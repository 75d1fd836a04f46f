/**
 * The client API (`durable-agent`): start conversations, send and steer messages, decide
 * approvals, follow runs and read history, through a Temporal client. Workers are built with
 * `durable-agent/worker`.
 *
 * @module durable-agent
 */
export {
  AgentClient,
  type ConversationExecution,
  type ConversationListing,
  type FollowRunOptions,
  type RunToFollow,
  type SendOptions,
  type Sent,
  type SteerOptions,
  type Steered,
  type WatchOptions,
} from './agent-client';
export { type RunEnd, type RunFinishedEvent, type RunSought, endsRun, learnRun } from './run-end';
export type { RetryingModelCall } from './retrying-model-call';
export {
  ConversationEndedError,
  ConversationExistsError,
  ConversationNotFoundError,
  InvalidInputError,
  MessageIdConflictError,
  ScheduleExistsError,
  ScheduleMissingError,
  UpdateRefusedError,
} from '../shared/conversation-errors';
export { buildTimeline, type ExecutionHistory } from '../history/build-timeline';
export { fetchConversationHistories } from '../history/conversation-history';
export {
  ConversationSchedules,
  type ConversationScheduleListing,
  type ScheduleConversationOptions,
} from './conversation-schedules';
export { WorkerDeployments } from './worker-deployments';
export { connectionSettingsFromEnv } from './connection-settings-from-env';
export { type TemporalConnectionOptions, temporalConnectionOptions } from './temporal-connection-options';
export type { ConnectionSettings, ConnectionTls, PemSource } from '../shared/connection-settings';
export {
  type CurrentChange,
  DeploymentNotFoundError,
  NoEarlierVersionError,
  type VersionStatus,
  type WorkerDeploymentListing,
  type WorkerDeploymentState,
  type WorkerDeploymentVersionState,
} from '../shared/worker-deployment-state';
export { readSigningKey, signApprovalMode, signDecision } from './sign-decision';
export { decodeHistoryPayloads } from '../history/decode-history-payloads';
export type {
  AbortItem,
  ActivityItem,
  ActivityOutcome,
  ApprovalItem,
  ContinuedAsNewItem,
  Delivery,
  EndRequestedItem,
  ExecutionClosedItem,
  ExecutionStartedItem,
  ExecutionStatus,
  MessageItem,
  ModelCallItem,
  RunStartedItem,
  SteerItem,
  Timeline,
  TimelineExecution,
  TimelineItem,
  ToolCallItem,
  UserMessageItem,
} from '../history/timeline';
export type { DecodedHistory } from '../history/decode-history-payloads';
export type { DecodedConversationHistory } from '../history/decoded-conversation-history';
export type { Admission } from './conversation-execution';
export type { StartOptions } from './conversation-start';
export type { ConversationOverview, OverviewFilter } from './conversation-overview';
export type { ModelTextDelta, ModelTextListener, ModelTextSource } from './live-model-text';
export type {
  BudgetKind,
  BudgetLimits,
  BudgetPause,
  BudgetPauseKind,
  BudgetStatus,
  BudgetUsage,
} from '../shared/budget';
export type { CompactionReceipt } from '../shared/compaction';
export type { DailySpent } from '../shared/daily-budget';
export type {
  ApprovalDecision,
  ApprovalMode,
  ApprovalSettings,
  PendingApproval,
  PendingPolicy,
  StandingDecision,
} from '../shared/approvals';
export type { PolicyGroup } from '../shared/approval-policy';
export type { VisibleStatus } from '../shared/search-attributes';
export type {
  AbortInput,
  AbortReceipt,
  ApprovalModeInput,
  ApprovalReceipt,
  ConversationState,
  ConversationStatus,
  ConversationStatusSummary,
  ForkedFrom,
  LastRunSummary,
  MessageReceipt,
  SteerReceipt,
} from '../shared/conversation-api';
export type { ConversationOptionsInput } from '../shared/conversation-options';
export type { A2APushConfig, A2APushConfigChange, A2APushConfigReceipt } from '../shared/a2a-push';
export type { AgentEvent } from '../shared/events';
export type { Message } from '../shared/messages';
export type {
  ClientTool,
  ClientToolReceipt,
  ClientToolResult,
  PendingClientToolCall,
} from '../shared/client-tools';
