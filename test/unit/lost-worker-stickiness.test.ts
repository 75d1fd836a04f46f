import type { Context } from '@temporalio/activity';
import { temporal } from '@temporalio/proto';
import { type StickinessService, lostWorkerStickiness } from '../../src/worker/lost-worker-stickiness';

const { TIMEOUT_TYPE_HEARTBEAT, TIMEOUT_TYPE_START_TO_CLOSE } = temporal.api.enums.v1.TimeoutType;
const execution = { workflowId: 'conv-1', runId: 'run-1' };

/** A workflow service whose pending activity `act-1` last failed with `timeoutType` (none: another failure). */
function fakeService(timeoutType?: number, failDescribe = false) {
  const calls: string[] = [];
  const service: StickinessService = {
    async describeWorkflowExecution(request) {
      calls.push(`describe ${request.namespace} ${request.execution.workflowId}`);
      if (failDescribe) throw new Error('frontend unavailable');
      return {
        pendingActivities: [
          {
            activityId: 'other',
            lastFailure: { timeoutFailureInfo: { timeoutType: TIMEOUT_TYPE_HEARTBEAT } },
          },
          {
            activityId: 'act-1',
            lastFailure: timeoutType === undefined ? {} : { timeoutFailureInfo: { timeoutType } },
          },
        ],
      };
    },
    async resetStickyTaskQueue(request) {
      calls.push(`reset ${request.namespace} ${request.execution.workflowId} ${request.execution.runId}`);
    },
  };
  return { service, calls };
}

async function runAttempt(
  attempt: number,
  { service, calls }: { service: StickinessService; calls: string[] },
): Promise<unknown> {
  const context = {
    info: {
      attempt,
      activityId: 'act-1',
      workflowExecution: execution,
      workflowNamespace: 'ns',
      activityNamespace: 'ns',
    },
  } as unknown as Context;
  const interceptors = lostWorkerStickiness(() => service)(context);
  return interceptors.inbound!.execute!({ args: [], headers: {} }, async () => {
    calls.push('attempt');
    return 'ran';
  });
}

test('an attempt after one whose heartbeats stopped resets the conversation to any worker', async () => {
  const fake = fakeService(TIMEOUT_TYPE_HEARTBEAT);
  expect(await runAttempt(2, fake)).toBe('ran');
  // Before the attempt: a quick attempt's result must not reach the dead worker's queue first.
  expect(fake.calls).toEqual(['describe ns conv-1', 'reset ns conv-1 run-1', 'attempt']);
});

test('a first attempt asks nothing', async () => {
  const fake = fakeService(TIMEOUT_TYPE_HEARTBEAT);
  expect(await runAttempt(1, fake)).toBe('ran');
  expect(fake.calls).toEqual(['attempt']);
});

test('a retry after another failure (a rate limit, a start-to-close timeout) leaves stickiness alone', async () => {
  for (const timeoutType of [undefined, TIMEOUT_TYPE_START_TO_CLOSE]) {
    const fake = fakeService(timeoutType);
    expect(await runAttempt(3, fake)).toBe('ran');
    expect(fake.calls).toEqual(['describe ns conv-1', 'attempt']);
  }
});

test('the attempt runs when the server cannot be asked', async () => {
  const fake = fakeService(TIMEOUT_TYPE_HEARTBEAT, true);
  expect(await runAttempt(2, fake)).toBe('ran');
  expect(fake.calls).toEqual(['describe ns conv-1', 'attempt']);
});

test('the attempt runs when the worker has no client to ask with', async () => {
  const context = {
    info: { attempt: 2, activityId: 'act-1', workflowExecution: execution, activityNamespace: 'ns' },
  } as unknown as Context;
  const interceptors = lostWorkerStickiness(() => {
    throw new Error('no client in this activity context');
  })(context);
  await expect(interceptors.inbound!.execute!({ args: [], headers: {} }, async () => 'ran')).resolves.toBe(
    'ran',
  );
});
