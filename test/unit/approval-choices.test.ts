import {
  approveCommandLine,
  decisionFromAnswer,
  decisionFromFlags,
  waitOrRejectFromAnswer,
} from '../../src/cli/approval-choices';

test.each([
  ['o', 'allow_once'],
  [' Once ', 'allow_once'],
  ['y', 'allow_once'],
  ['a', 'allow_always'],
  ['always', 'allow_always'],
  ['r', 'reject_once'],
  ['no', 'reject_once'],
  ['', undefined],
  ['maybe', undefined],
])('the answer %j is %s', (answer, decision) => {
  expect(decisionFromAnswer(answer)).toBe(decision);
});

test('flags: allow once unless told otherwise', () => {
  expect(decisionFromFlags({ always: false, reject: false })).toBe('allow_once');
  expect(decisionFromFlags({ always: true, reject: true })).toBe('reject_always');
});

test('the approve command line quotes what the shell would split', () => {
  expect(approveCommandLine('conv-1', 'call_abc')).toBe('durable-agent approve conv-1 call_abc');
  expect(approveCommandLine('conv-1', "call it's")).toBe(`durable-agent approve conv-1 'call it'\\''s'`);
});

test.each([
  ['w', 'wait'],
  ['Wait', 'wait'],
  ['r', 'reject_once'],
  [' reject ', 'reject_once'],
  ['o', undefined],
  ['yes', undefined],
])("a run waiting for its agent's next day: %j answers %j (an allow is no choice)", (answer, choice) => {
  expect(waitOrRejectFromAnswer(answer)).toBe(choice);
});
