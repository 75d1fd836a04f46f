import type { Context } from '@temporalio/activity';
import { LocalCancelRequests } from '../../src/activities/local-cancel-requests';

/** Just what the registry reads of an activity's context. */
function fakeContext(runId: string, activityId: string) {
  const controller = new AbortController();
  let rejectCancelled: (error: unknown) => void = () => undefined;
  const cancelled = new Promise<never>((_resolve, reject) => (rejectCancelled = reject));
  const fake = {
    info: {
      activityId,
      workflowNamespace: 'default',
      workflowExecution: { workflowId: `wf-${runId}`, runId },
    },
    cancellationSignal: controller.signal,
    cancellationDetails: undefined as { cancelRequested: boolean; timedOut: boolean } | undefined,
    cancelled,
  };
  return {
    context: fake as unknown as Context,
    /** The SDK's own cancellation, as a heartbeat response delivers it. */
    sdkCancels(details: { cancelRequested: boolean; timedOut: boolean }) {
      fake.cancellationDetails = details;
      controller.abort(new Error('cancelled by the SDK'));
      rejectCancelled(new Error('cancelled by the SDK'));
    },
  };
}

const tick = (ms = 5) => new Promise((resolve) => setTimeout(resolve, ms));

test('an activity stops only once the server reports its cancel request, and only that run’s activities', async () => {
  const recorded = new Set<string>();
  const asked: string[] = [];
  const cancels = new LocalCancelRequests({
    pollMs: 1,
    cancelRequestedActivities: async (_context, workflowId, runId) => {
      asked.push(`${workflowId}/${runId}`);
      return new Set(recorded);
    },
  });
  const first = cancels.watch(fakeContext('run-a', '7').context);
  const second = cancels.watch(fakeContext('run-a', '8').context);
  const elsewhere = cancels.watch(fakeContext('run-b', '7').context);

  cancels.requested('run-a');
  await tick();
  expect(first.signal.aborted).toBe(false); // the server has not recorded it yet
  expect(asked.every((run) => run === 'wf-run-a/run-a')).toBe(true);

  recorded.add('7');
  await tick();
  expect(first.signal.aborted).toBe(true);
  expect(first.cancelRequested).toBe(true);
  expect(first.timedOut).toBe(false);
  expect(second.signal.aborted).toBe(false);
  expect(elsewhere.signal.aborted).toBe(false);

  recorded.add('8');
  await tick();
  expect(second.signal.aborted).toBe(true);
  for (const stop of [first, second, elsewhere]) stop.release();
});

test('nothing is asked for a run with no activity here; asking stops after its patience and when the run is gone', async () => {
  let calls = 0;
  const never = new LocalCancelRequests({
    pollMs: 1,
    patienceMs: 30,
    cancelRequestedActivities: async () => {
      calls++;
      return new Set<string>();
    },
  });
  never.requested('run-nobody');
  await tick(10);
  expect(calls).toBe(0);

  const stop = never.watch(fakeContext('run-c', '1').context);
  never.requested('run-c');
  await tick(60);
  const afterPatience = calls;
  expect(afterPatience).toBeGreaterThan(0);
  await tick(20);
  expect(calls).toBe(afterPatience);
  expect(stop.signal.aborted).toBe(false);
  stop.release();

  let gone = 0;
  const closed = new LocalCancelRequests({
    pollMs: 1,
    cancelRequestedActivities: async () => {
      gone++;
      return undefined;
    },
  });
  const orphan = closed.watch(fakeContext('run-d', '1').context);
  closed.requested('run-d');
  await tick(20);
  expect(gone).toBe(1);
  orphan.release();
});

test('the SDK’s own cancellation still stops the activity, and says why', async () => {
  const cancels = new LocalCancelRequests({ cancelRequestedActivities: async () => new Set<string>() });
  const timedOut = fakeContext('run-e', '1');
  const stop = cancels.watch(timedOut.context);
  let settled = false;
  void stop.sdkCancellation().then(() => (settled = true));
  timedOut.sdkCancels({ cancelRequested: false, timedOut: true });
  await tick();
  expect(stop.signal.aborted).toBe(true);
  expect(stop.cancelRequested).toBe(false);
  expect(stop.timedOut).toBe(true);
  expect(settled).toBe(true);
  stop.release();
});

test('many runs cancelled at once ask the server a few at a time', async () => {
  let inFlight = 0;
  let most = 0;
  const cancels = new LocalCancelRequests({
    pollMs: 1,
    maxAsksInFlight: 2,
    cancelRequestedActivities: async (_context, _workflowId, runId) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await tick(3);
      inFlight--;
      return new Set([`${runId}-activity`]);
    },
  });
  const stops = Array.from({ length: 6 }, (_, i) =>
    cancels.watch(fakeContext(`run-${i}`, `run-${i}-activity`).context),
  );
  for (let i = 0; i < 6; i++) cancels.requested(`run-${i}`);
  // Waits for the stops, not for a fixed time: a loaded machine delays every timer.
  for (let waited = 0; waited < 5_000 && !stops.every((stop) => stop.signal.aborted); waited += 10) {
    await tick(10);
  }
  expect(stops.every((stop) => stop.signal.aborted)).toBe(true);
  expect(most).toBe(2);
  for (const stop of stops) stop.release();
});
