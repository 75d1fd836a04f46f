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
export {
  ConversationEndedError,
  ConversationExistsError,
  ConversationNotFoundError,
  InvalidInputError,
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
export type { Timeline, TimelineItem } from '../history/timeline';
export type { ApprovalDecision, ApprovalSettings, PendingApproval } from '../shared/approvals';
export type {
  AbortInput,
  AbortReceipt,
  ApprovalModeInput,
  ApprovalReceipt,
  ConversationState,
  ConversationStatusSummary,
  SteerReceipt,
} from '../shared/conversation-api';
export type { ConversationOptionsInput } from '../shared/conversation-options';
export type { AgentEvent } from '../shared/events';
export type { Message } from '../shared/messages';
