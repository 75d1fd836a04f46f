import { randomUUID } from 'node:crypto';
import { ask, followToEnd } from '../support/ask';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import type { AgentEvent } from '../../src/shared/events';
import { DEFAULT_MODEL_RETRY_MS } from '../../src/shared/liveness';

/**
 * A model call is tried again for a time, not a number of attempts: a provider's outage or workers
 * killed under the call use up attempts, not the run. While it is tried again, watchers and
 * `execution()` say so, with the last attempt's error.
 */
const harness = useNockedHarness([]);
const newId = () => `conv-${randomUUID()}`;
const overloaded = { status: 503, error: 'overloaded' };
const retriesIn = (events: AgentEvent[]) =>
  events.flatMap((event) => (event.type === 'model_retry' ? [event] : []));

async function modelCallsScheduled(conversationId: string) {
  const history = await harness().client.workflow.getHandle(conversationId).fetchHistory();
  return (history.events ?? []).flatMap((event) => {
    const scheduled = event.activityTaskScheduledEventAttributes;
    return scheduled?.activityType?.name === 'callModel' ? [scheduled] : [];
  });
}

test('failed attempts are tried again without a count, each one told to watchers, until the model answers', async () => {
  const script = nockModel([overloaded, overloaded, overloaded, { text: 'Back online.' }]);
  const id = newId();
  const sentAt = Date.now();
  const { finished, seen } = await ask(harness().agent, id, 'Hello?');
  expect(finished).toMatchObject({ outcome: 'answered', answer: 'Back online.' });
  expect(script.requests).toHaveLength(4);

  // Each failed attempt a watcher saw is told once, in order; the last (the fourth attempt's wait,
  // two seconds of backoff) cannot be missed.
  const retries = retriesIn(seen);
  const attempts = retries.map((retry) => retry.attempt);
  expect(attempts).toEqual([...new Set(attempts)].sort());
  expect(attempts).toContain(4);
  for (const retry of retries) {
    expect(retry.error).toMatch(/503.*overloaded/);
    expect(retry.givesUpAt! - sentAt).toBeGreaterThan(DEFAULT_MODEL_RETRY_MS - 60_000);
    expect(retry.givesUpAt! - sentAt).toBeLessThan(DEFAULT_MODEL_RETRY_MS + 60_000);
  }
  expect(seen.indexOf(retries.at(-1)!)).toBeLessThan(
    seen.findIndex((event) => event.type === 'model_response'),
  );

  const [scheduled] = await modelCallsScheduled(id);
  expect(Number(scheduled!.scheduleToCloseTimeout!.seconds)).toBe(DEFAULT_MODEL_RETRY_MS / 1_000);
  expect(scheduled!.retryPolicy!.maximumAttempts ?? 0).toBe(0);
});

test('a call that fails for all of modelRetryMs ends the run with an error saying so; execution() shows it retrying meanwhile', async () => {
  const script = nockModel(Array.from({ length: 20 }, () => overloaded));
  const id = newId();
  const sent = await harness().agent.send(id, 'Hello?', { options: { modelRetryMs: 10_000 } });

  let retrying = await harness().agent.execution(id);
  for (let look = 0; !retrying.modelRetry && look < 300; look++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    retrying = await harness().agent.execution(id);
  }
  expect(retrying.executionStatus).toBe('RUNNING');
  expect(retrying.modelRetry).toMatchObject({
    attempt: expect.any(Number),
    error: expect.stringMatching(/503/),
  });
  expect(retrying.modelRetry!.attempt).toBeGreaterThanOrEqual(2);

  const { finished, seen } = await followToEnd(harness().agent, sent);
  expect(finished.outcome).toBe('error');
  const errors = seen.flatMap((event) => (event.type === 'error' ? [event.message] : []));
  expect(errors).toEqual([
    expect.stringMatching(
      /^model call failed, tried again for 10 s \(the conversation's modelRetryMs\): the model endpoint answered 503.*overloaded/,
    ),
  ]);
  // 0.5, 1, 2 and 4 s apart: the fifth attempt starts 7.5 s in at the soonest, and the next would
  // start after 10 s.
  expect(script.requests.length).toBeGreaterThanOrEqual(2);
  expect(script.requests.length).toBeLessThanOrEqual(5);
  expect((await harness().agent.execution(id)).modelRetry).toBeUndefined();
});
