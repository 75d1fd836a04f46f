import type { NewAgentEvent } from '../../src/shared/events';
import { EventLog } from '../../src/workflows/event-log';

const errorEvent = (message: string): NewAgentEvent => ({ type: 'error', message });

afterEach(() => jest.restoreAllMocks());

test('record stamps increasing sequence numbers, the time and the run', () => {
  const now = jest.spyOn(Date, 'now').mockReturnValue(1_000);
  const log = new EventLog(10);
  const first = log.record(1, errorEvent('a'));
  now.mockReturnValue(2_000);
  const second = log.record(2, { type: 'run_started', messageIds: ['m1'] });
  expect(first).toEqual({ type: 'error', message: 'a', seq: 1, at: 1_000, run: 1 });
  expect(second).toEqual({ type: 'run_started', messageIds: ['m1'], seq: 2, at: 2_000, run: 2 });
  expect(log.all()).toEqual([first, second]);
});

test('record does not keep a reference to the caller object', () => {
  const log = new EventLog(10);
  const event = { type: 'error' as const, message: 'a' };
  log.record(1, event);
  event.message = 'changed';
  expect(log.all()[0]).toMatchObject({ message: 'a' });
});

test('a bounded log keeps the newest events and sequence numbers keep rising', () => {
  const log = new EventLog(3);
  for (let index = 1; index <= 5; index++) log.record(1, errorEvent(`e${index}`));
  expect(log.all().map((event) => event.seq)).toEqual([3, 4, 5]);
  expect(log.all().map((event) => (event.type === 'error' ? event.message : ''))).toEqual(['e3', 'e4', 'e5']);
  expect(log.record(1, errorEvent('e6')).seq).toBe(6);
  expect(log.all().map((event) => event.seq)).toEqual([4, 5, 6]);
});

test('after(seq) returns only newer events', () => {
  const log = new EventLog(10);
  for (let index = 1; index <= 4; index++) log.record(1, errorEvent(`e${index}`));
  expect(log.after(0).map((event) => event.seq)).toEqual([1, 2, 3, 4]);
  expect(log.after(2).map((event) => event.seq)).toEqual([3, 4]);
  expect(log.after(4)).toEqual([]);
  expect(log.after(100)).toEqual([]);
});

test('after(seq) on a trimmed log starts at the oldest kept event', () => {
  const log = new EventLog(2);
  for (let index = 1; index <= 5; index++) log.record(1, errorEvent(`e${index}`));
  expect(log.after(1).map((event) => event.seq)).toEqual([4, 5]);
  expect(log.after(4).map((event) => event.seq)).toEqual([5]);
});

test('an empty log has nothing after any seq', () => {
  const log = new EventLog(5);
  expect(log.after(0)).toEqual([]);
  expect(log.all()).toEqual([]);
});

test('all() and after() return copies', () => {
  const log = new EventLog(5);
  log.record(1, errorEvent('a'));
  log.all().pop();
  log.after(0).pop();
  expect(log.all()).toHaveLength(1);
});

test('lastSeq is 0 before any event and the newest sequence number after, trimmed or not', () => {
  const log = new EventLog(2);
  expect(log.lastSeq).toBe(0);
  for (let index = 1; index <= 5; index++) log.record(1, errorEvent(`e${index}`));
  expect(log.lastSeq).toBe(5);
});

test('a carried log keeps the newest events it is handed and goes on numbering after them', () => {
  const first = new EventLog(10);
  for (let index = 1; index <= 6; index++) first.record(1, errorEvent(`e${index}`));
  const carried = first.carry(4);
  expect(carried.events.map((event) => event.seq)).toEqual([3, 4, 5, 6]);
  const next = new EventLog(3, carried);
  expect(next.all().map((event) => event.seq)).toEqual([4, 5, 6]);
  expect(next.record(2, errorEvent('e7')).seq).toBe(7);
  expect(next.after(5).map((event) => event.seq)).toEqual([6, 7]);
});
