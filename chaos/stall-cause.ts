/**
 * What a conversation is waiting for while it makes no progress after a fault, read from what the
 * server says of it (describe) and of its sub-agents. The chaos report attributes each slow
 * fault-to-progress sample to one of these causes, so a worst case can be told apart: the
 * runtime's (a dead worker's task held until a timeout) or the scenario's (a model fault's backoff,
 * a slow tool, a person's decision).
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

export const STALL_CAUSES = [
  'workflow task held by a killed worker',
  'workflow task waiting for a worker',
  'activity held by a killed worker (heartbeat timeout)',
  'retry backoff after a heartbeat timeout',
  'retry backoff after a model fault',
  'retry backoff after a tool failure',
  'model call running',
  'tool running',
  'waiting for a person',
  'sub-agent',
  'idle, waiting for its client',
  'conversation ended',
  'not readable',
] as const;
export type StallCauseKind = (typeof STALL_CAUSES)[number];

export interface StallCause {
  kind: StallCauseKind;
  /** What exactly: the activity, its attempt, the last failure, how long. */
  detail: string;
}

const ActivityState = temporal.api.enums.v1.PendingActivityState;
const WorkflowTaskState = temporal.api.enums.v1.PendingWorkflowTaskState;
const ExecutionStatus = temporal.api.enums.v1.WorkflowExecutionStatus;
type Description = temporal.api.workflowservice.v1.IDescribeWorkflowExecutionResponse;
type PendingActivity = temporal.api.workflow.v1.IPendingActivityInfo;

const seconds = (timestamp: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
  timestamp ? Number(timestamp.seconds ?? 0) + (timestamp.nanos ?? 0) / 1e9 : undefined;
const ago = (timestamp: Parameters<typeof seconds>[0], nowMs: number) => {
  const at = seconds(timestamp);
  return at === undefined ? '?' : `${(nowMs / 1_000 - at).toFixed(1)} s`;
};

/** Whether a worker identity (`<pid>@<host>`, maybe followed by its push endpoint) is one of the killed. */
const killedIdentity = (identity: string | null | undefined, killedPids: ReadonlySet<number>) => {
  const pid = Number(/^(\d+)@/.exec(identity ?? '')?.[1]);
  return Number.isInteger(pid) && killedPids.has(pid);
};

/** The cause for one pending activity, or undefined when it is not what holds the conversation up. */
function activityCause(
  activity: PendingActivity,
  killedPids: ReadonlySet<number>,
  nowMs: number,
): StallCause {
  const type = activity.activityType?.name ?? 'activity';
  const attempt = activity.attempt ?? 1;
  const failure = activity.lastFailure;
  const failureText = failure
    ? `${failure.timeoutFailureInfo ? `${temporal.api.enums.v1.TimeoutType[failure.timeoutFailureInfo.timeoutType ?? 0]} timeout` : (failure.message ?? '')}`.slice(
        0,
        120,
      )
    : '';
  if (activity.state === ActivityState.PENDING_ACTIVITY_STATE_SCHEDULED && attempt > 1) {
    const next = seconds(activity.nextAttemptScheduleTime);
    const detail = `${type} attempt ${attempt} ${next !== undefined && next * 1_000 > nowMs ? `due in ${(next - nowMs / 1_000).toFixed(1)} s` : 'scheduled'}, after: ${failureText}`;
    if (failure?.timeoutFailureInfo) return { kind: 'retry backoff after a heartbeat timeout', detail };
    return {
      kind: type === 'callModel' ? 'retry backoff after a model fault' : 'retry backoff after a tool failure',
      detail,
    };
  }
  if (activity.state !== ActivityState.PENDING_ACTIVITY_STATE_SCHEDULED) {
    const started = `${type} attempt ${attempt}, started ${ago(activity.lastStartedTime, nowMs)} ago, last heartbeat ${ago(activity.lastHeartbeatTime, nowMs)} ago`;
    if (killedIdentity(activity.lastWorkerIdentity, killedPids)) {
      return { kind: 'activity held by a killed worker (heartbeat timeout)', detail: started };
    }
    return { kind: type === 'callModel' ? 'model call running' : 'tool running', detail: started };
  }
  return {
    kind: 'tool running',
    detail: `${type} scheduled ${ago(activity.scheduledTime, nowMs)} ago, not started`,
  };
}

/** The order in which causes explain a stall: what blocks everything else first. */
const PRECEDENCE: readonly StallCauseKind[] = [
  'workflow task held by a killed worker',
  'workflow task waiting for a worker',
  'activity held by a killed worker (heartbeat timeout)',
  'retry backoff after a heartbeat timeout',
  'retry backoff after a model fault',
  'retry backoff after a tool failure',
  'model call running',
  'tool running',
];

/** What `description` shows the workflow waiting for, most blocking first; undefined when nothing. */
export function causeOfDescription(
  description: Description,
  killedPids: ReadonlySet<number>,
  nowMs: number,
): StallCause | undefined {
  const causes: StallCause[] = [];
  const task = description.pendingWorkflowTask;
  if (task) {
    const attempt = task.attempt ?? 1;
    const since = ago(task.originalScheduledTime ?? task.scheduledTime, nowMs);
    causes.push(
      task.state === WorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_STARTED || attempt > 1
        ? {
            kind: 'workflow task held by a killed worker',
            detail: `workflow task attempt ${attempt}, first scheduled ${since} ago (timed out on a worker that died, or on its sticky queue)`,
          }
        : { kind: 'workflow task waiting for a worker', detail: `workflow task scheduled ${since} ago` },
    );
  }
  for (const activity of description.pendingActivities ?? [])
    causes.push(activityCause(activity, killedPids, nowMs));
  causes.sort((a, b) => PRECEDENCE.indexOf(a.kind) - PRECEDENCE.indexOf(b.kind));
  return causes[0];
}

/**
 * What conversation `id` waits for now: its own pending workflow task and activities; failing
 * those, a person's decision or a sub-agent (and what the sub-agent waits for).
 */
export async function stallCause(
  client: Client,
  id: string,
  killedPids: ReadonlySet<number>,
  pendingApprovals: () => Promise<number>,
): Promise<StallCause> {
  const describe = (workflowId: string) =>
    client.workflowService.describeWorkflowExecution({
      namespace: client.options.namespace,
      execution: { workflowId },
    });
  let description: Description;
  try {
    description = await describe(id);
  } catch (error) {
    return { kind: 'not readable', detail: (error as Error).message.slice(0, 120) };
  }
  const status = description.workflowExecutionInfo?.status;
  if (
    status !== undefined &&
    status !== null &&
    status !== ExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING
  ) {
    return { kind: 'conversation ended', detail: ExecutionStatus[status] ?? String(status) };
  }
  const own = causeOfDescription(description, killedPids, Date.now());
  if (own) return own;
  if ((await pendingApprovals().catch(() => 0)) > 0) {
    return { kind: 'waiting for a person', detail: 'an approval is pending' };
  }
  const child = description.pendingChildren?.[0];
  if (child?.workflowId) {
    const inner = await describe(child.workflowId).then(
      (childDescription) => causeOfDescription(childDescription, killedPids, Date.now()),
      () => undefined,
    );
    return {
      kind: 'sub-agent',
      detail: `${child.workflowId}: ${inner ? `${inner.kind}: ${inner.detail}` : 'nothing pending'}`,
    };
  }
  // Nothing of its own to wait for: the next message, decision or end is the client's to send (in a
  // trial, once the client's follower has seen the last run end).
  return {
    kind: 'idle, waiting for its client',
    detail: 'no workflow task, activity, approval or sub-agent pending',
  };
}
