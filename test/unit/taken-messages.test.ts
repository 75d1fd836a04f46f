import { messageFingerprint } from '../../src/shared/message-fingerprint';
import { TAKEN_MESSAGES_REMEMBERED, TakenMessages } from '../../src/workflows/taken-messages';

const message = (messageId: string, text = `text of ${messageId}`) => ({ messageId, text });
const place = { afterSeq: 3, afterRun: 1 };

test('a message id is taken once: a repeat finds the first receipt, another message under it is a conflict', () => {
  const taken = new TakenMessages(true);
  expect(taken.take(message('a'), place)).toEqual({ kind: 'new' });
  const receipt = { fingerprint: messageFingerprint(message('a')), ...place };
  expect(taken.take(message('a'), { afterSeq: 9, afterRun: 2 })).toEqual({ kind: 'repeat', receipt });
  expect(taken.take(message('a', 'other'), place)).toEqual({ kind: 'conflict', receipt });
  expect(taken.check(message('a'))).toEqual({ kind: 'repeat', receipt });
  expect(taken.check(message('b'))).toEqual({ kind: 'new' });
  // check takes nothing.
  expect(taken.take(message('b'), place)).toEqual({ kind: 'new' });
});

test('the latest ids are remembered, the oldest forgotten, and what is remembered is carried on', () => {
  const taken = new TakenMessages(true);
  for (let index = 0; index <= TAKEN_MESSAGES_REMEMBERED; index++) taken.take(message(`m${index}`), place);
  expect(taken.receipt('m0')).toBeUndefined();
  expect(taken.receipt('m1')).toBeDefined();
  const carried = taken.carry()!;
  expect(carried).toHaveLength(TAKEN_MESSAGES_REMEMBERED);
  const next = new TakenMessages(true, carried);
  expect(next.take(message(`m${TAKEN_MESSAGES_REMEMBERED}`), place).kind).toBe('repeat');
  expect(next.take(message('m0'), place).kind).toBe('new');
});

test('executions from before this memory take every delivery and carry nothing', () => {
  const taken = new TakenMessages(false);
  expect(taken.take(message('a'), place)).toEqual({ kind: 'new' });
  expect(taken.take(message('a'), place)).toEqual({ kind: 'new' });
  expect(taken.carry()).toBeUndefined();
});

test('the fingerprint tells apart text, sender and images, and reads long texts by their ends and length', () => {
  const base = { text: 'hello', sender: 'ann' };
  const fingerprint = messageFingerprint(base);
  expect(messageFingerprint({ ...base })).toBe(fingerprint);
  expect(messageFingerprint({ ...base, text: 'hello!' })).not.toBe(fingerprint);
  expect(messageFingerprint({ ...base, sender: 'bob' })).not.toBe(fingerprint);
  expect(messageFingerprint({ text: 'hello' })).not.toBe(fingerprint);
  const image = { type: 'image' as const, mimeType: 'image/png', data: 'AAAA' };
  expect(messageFingerprint({ ...base, images: [image] })).not.toBe(fingerprint);
  expect(messageFingerprint({ ...base, images: [{ ...image, data: 'AAAB' }] })).not.toBe(
    messageFingerprint({ ...base, images: [image] }),
  );
  const long = 'x'.repeat(100_000);
  expect(messageFingerprint({ text: `${long}y` })).not.toBe(messageFingerprint({ text: `${long}z` }));
  expect(messageFingerprint({ text: `y${long}` })).not.toBe(messageFingerprint({ text: `z${long}` }));
  expect(messageFingerprint({ text: long })).not.toBe(messageFingerprint({ text: `${long}x` }));
});
