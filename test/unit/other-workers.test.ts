import { pollerAlive } from '../../src/worker/other-workers';

const here = (alive: number[]) => ({
  nowMs: 1_000_000,
  ownPid: 10,
  host: 'box',
  pidAlive: (pid: number) => alive.includes(pid),
});

test('a recent poller of a live process elsewhere or here keeps the server; this process, a stale or an exited one do not', () => {
  expect(pollerAlive('20@box', 990_000, here([20]))).toBe(true);
  expect(pollerAlive('20@other-host', 990_000, here([]))).toBe(true);
  expect(pollerAlive('custom-identity', 990_000, here([]))).toBe(true);
  // A worker of this machine that exited seconds ago still polled recently, as the server sees it.
  expect(pollerAlive('20@box', 990_000, here([]))).toBe(false);
  expect(pollerAlive('10@box', 990_000, here([10]))).toBe(false);
  expect(pollerAlive('20@box', 900_000, here([20]))).toBe(false);
});
