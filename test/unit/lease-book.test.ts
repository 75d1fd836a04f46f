import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  FIRST_THROTTLE_PAUSE_MS,
  LeaseBook,
  LONGEST_THROTTLE_PAUSE_MS,
  emptyLeaseBook,
} from '../../src/shared/lease-book';
import { WorkerLeaseQueue } from '../../src/activities/worker-lease-queue';
import { modelEndpointKey, modelLimiterFromEnv } from '../../src/worker/model-limit-settings';
import { rootConversationOf, subAgentId } from '../../src/shared/sub-agents';

const TTL = 30_000;

function book(limits: { maxConcurrent?: number; maxRps?: number } = {}) {
  return new LeaseBook(emptyLeaseBook({ ...limits, leaseTtlMs: TTL }));
}

function ask(leases: LeaseBook, ticket: string, agent = 'a', tree = agent) {
  leases.ask({ ticket, agent, tree });
}

test('at most maxConcurrent leases are held; a release lets the next one in', () => {
  const leases = book({ maxConcurrent: 2 });
  for (const ticket of ['t1', 't2', 't3']) ask(leases, ticket);
  expect(leases.grant(0)).toEqual(['t1', 't2']);
  expect(leases.grant(0)).toEqual([]);
  leases.release('t1', 'ok', 10);
  expect(leases.grant(10)).toEqual(['t3']);
  expect(leases.heldCount).toBe(2);
});

test('asking again with a ticket that waits or holds keeps its place and adds nothing', () => {
  const leases = book({ maxConcurrent: 1 });
  ask(leases, 't1');
  ask(leases, 't2');
  leases.grant(0);
  ask(leases, 't1');
  ask(leases, 't2');
  expect(leases.heldCount).toBe(1);
  expect(leases.waitingCount).toBe(1);
});

test('agents take turns: 500 waiting calls of one agent and one of another alternate', () => {
  const leases = book({ maxConcurrent: 1 });
  for (let i = 0; i < 500; i++) ask(leases, `busy-${i}`, 'busy');
  ask(leases, 'single-0', 'single');
  const order: string[] = [];
  for (let now = 0; now < 3; now++) {
    const [granted] = leases.grant(now);
    order.push(granted!);
    leases.release(granted!, 'ok', now);
  }
  expect(order).toEqual(['busy-0', 'single-0', 'busy-1']);
});

test('within an agent its conversation trees take turns', () => {
  const leases = book({ maxConcurrent: 3 });
  for (let i = 0; i < 3; i++) ask(leases, `big-${i}`, 'default', 'big');
  ask(leases, 'small-0', 'default', 'small');
  expect(leases.grant(0)).toEqual(['big-0', 'small-0', 'big-1']);
});

test('grants are spaced 1000 / maxRps ms apart, and the limiter wakes when the next is due', () => {
  const leases = book({ maxRps: 4 });
  for (const ticket of ['t1', 't2', 't3']) ask(leases, ticket);
  expect(leases.grant(0)).toEqual(['t1']);
  expect(leases.wakeAtMs(0)).toBe(250);
  expect(leases.grant(100)).toEqual([]);
  expect(leases.grant(250)).toEqual(['t2']);
});

test('a lease whose holder stops renewing it comes back after its time to live; renewing keeps it', () => {
  const leases = book({ maxConcurrent: 2 });
  ask(leases, 'dead');
  ask(leases, 'alive');
  leases.grant(0);
  ask(leases, 'next');
  expect(leases.wakeAtMs(0)).toBe(TTL);
  leases.renew('alive', TTL - 1);
  leases.expire(TTL);
  expect(leases.holds('dead')).toBe(false);
  expect(leases.holds('alive')).toBe(true);
  expect(leases.grant(TTL)).toEqual(['next']);
});

test('a 429 pauses every grant, then one call probes alone; 429s after a pause double it; a success ends it', () => {
  const leases = book({ maxConcurrent: 4 });
  for (let i = 0; i < 6; i++) ask(leases, `t${i}`);
  leases.grant(0); // t0..t3
  leases.release('t0', 'rate_limited', 0);
  // The calls already running when the pause began do not lengthen it.
  leases.release('t1', 'rate_limited', 10);
  leases.release('t2', 'failed', 10);
  leases.release('t3', 'failed', 10);
  expect(leases.grant(FIRST_THROTTLE_PAUSE_MS - 1)).toEqual([]);
  expect(leases.grant(FIRST_THROTTLE_PAUSE_MS + 10)).toEqual(['t4']);
  expect(leases.grant(FIRST_THROTTLE_PAUSE_MS + 20)).toEqual([]); // probing
  leases.release('t4', 'rate_limited', 2_000);
  expect(leases.wakeAtMs(2_000)).toBe(2_000 + 2 * FIRST_THROTTLE_PAUSE_MS);
  expect(leases.grant(2_000 + 2 * FIRST_THROTTLE_PAUSE_MS)).toEqual(['t5']);
  ask(leases, 't6');
  ask(leases, 't7');
  leases.release('t5', 'ok', 5_000);
  expect(leases.grant(5_000)).toEqual(['t6', 't7']);
});

test("a 429's Retry-After sets the pause; doubling stops at the longest pause", () => {
  const leases = book({ maxConcurrent: 1 });
  ask(leases, 't0');
  leases.grant(0);
  leases.release('t0', 'rate_limited', 0, 7_000);
  ask(leases, 't1');
  expect(leases.wakeAtMs(0)).toBe(7_000);
  let now = 7_000;
  for (let i = 0; i < 10; i++) {
    leases.grant(now);
    leases.release(`t${i + 1}`, 'rate_limited', now);
    ask(leases, `t${i + 2}`);
    now = leases.wakeAtMs(now)!;
  }
  expect(leases.state.pauseMs).toBe(LONGEST_THROTTLE_PAUSE_MS);
});

test('a release of a waiting ticket gives up its place', () => {
  const leases = book({ maxConcurrent: 1 });
  ask(leases, 't1');
  ask(leases, 't2');
  leases.release('t2', 'failed', 0);
  expect(leases.isWaiting('t2')).toBe(false);
  expect(leases.grant(0)).toEqual(['t1']);
});

test('limits come from the environment or a file; none set means no limiter', () => {
  expect(modelLimiterFromEnv({ OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' })).toBeUndefined();
  expect(
    modelLimiterFromEnv({ OPENAI_BASE_URL: 'http://127.0.0.1:9/v1/', AGENT_MODEL_MAX_CONCURRENT: '4' }),
  ).toEqual({ endpointKey: '127.0.0.1:9/v1', limits: { maxConcurrent: 4, leaseTtlMs: 30_000 } });
  const file = path.join(os.tmpdir(), `model-limits-${process.pid}.json`);
  writeFileSync(file, JSON.stringify({ maxRps: 2.5, leaseTtlMs: 5_000 }));
  expect(modelLimiterFromEnv({ AGENT_MODEL_LIMITS_FILE: file, AGENT_MODEL_MAX_CONCURRENT: '8' })).toEqual({
    endpointKey: 'api.openai.com/v1',
    limits: { maxConcurrent: 8, maxRps: 2.5, leaseTtlMs: 5_000 },
  });
  expect(() => modelLimiterFromEnv({ AGENT_MODEL_MAX_RPS: 'fast' })).toThrow(/AGENT_MODEL_MAX_RPS/);
  expect(() => modelLimiterFromEnv({ AGENT_MODEL_MAX_CONCURRENT: '0' })).toThrow(/≥ 1/);
  expect(modelEndpointKey('https://api.example.com:8443/openai/v1')).toBe('api.example.com:8443/openai/v1');
});

test("a sub-agent's tree is its top conversation's", () => {
  const child = subAgentId('conv-1', 'call_a');
  expect(rootConversationOf(subAgentId(child, 'call_b'))).toBe('conv-1');
  expect(rootConversationOf('conv-1')).toBe('conv-1');
});

test("a worker's calls ask the limiter a few at a time, trees in turn, a lone tree's at once; a cancelled one gives its place up", async () => {
  const queue = new WorkerLeaseQueue(1);
  const never = new AbortController().signal;
  const asked: string[] = [];
  const ask = (ticket: string, tree: string, signal = never) =>
    queue.turn({ ticket, agent: tree, tree }, signal).then(() => asked.push(ticket));
  const all = [ask('big-0', 'big'), ask('big-1', 'big'), ask('big-2', 'big')];
  const cancel = new AbortController();
  const cancelled = ask('big-3', 'big', cancel.signal).catch(() => 'cancelled');
  // The first call of a tree with none asking asks at once, beside the one regular place.
  all.push(ask('lone-0', 'lone'), ask('lone-1', 'lone'));
  cancel.abort();
  expect(await cancelled).toBe('cancelled');
  await new Promise((resolve) => setImmediate(resolve));
  expect(asked).toEqual(['big-0', 'lone-0']);
  queue.done('lone-0');
  for (const ticket of ['big-0', 'big-1', 'lone-1']) {
    queue.done(ticket);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await Promise.all(all);
  expect(asked).toEqual(['big-0', 'lone-0', 'big-1', 'lone-1', 'big-2']);
});
