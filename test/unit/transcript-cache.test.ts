import { TranscriptCache } from '../../src/activities/transcript-cache';
import type { Message } from '../../src/shared/messages';

const messages = (count: number, tag = 'm'): Message[] =>
  Array.from({ length: count }, (_, index) => ({
    role: 'user',
    content: `${tag}${index}`,
    messageId: `${tag}${index}`,
    timestamp: index,
  }));

test('a miss for an unknown conversation', () => {
  expect(new TranscriptCache().prefix('c', 0, 0)).toBeUndefined();
});

test('a hit returns exactly the stored messages when the length matches', () => {
  const cache = new TranscriptCache();
  const stored = messages(3);
  cache.store('c', 0, stored);
  expect(cache.prefix('c', 0, 3)).toEqual(stored);
});

test('a cache shorter than requested is a miss', () => {
  const cache = new TranscriptCache();
  cache.store('c', 0, messages(2));
  expect(cache.prefix('c', 0, 3)).toBeUndefined();
});

test('a cache longer than requested returns the prefix', () => {
  const cache = new TranscriptCache();
  const stored = messages(5);
  cache.store('c', 0, stored);
  expect(cache.prefix('c', 0, 2)).toEqual(stored.slice(0, 2));
  expect(cache.prefix('c', 0, 0)).toEqual([]);
  // The cached entry itself is intact afterwards.
  expect(cache.prefix('c', 0, 5)).toEqual(stored);
});

test('generations and conversations are separate entries', () => {
  const cache = new TranscriptCache();
  cache.store('c', 0, messages(2, 'gen0-'));
  cache.store('c', 1, messages(2, 'gen1-'));
  cache.store('d', 0, messages(2, 'other-'));
  expect(cache.prefix('c', 0, 2)).toEqual(messages(2, 'gen0-'));
  expect(cache.prefix('c', 1, 2)).toEqual(messages(2, 'gen1-'));
  expect(cache.prefix('d', 0, 2)).toEqual(messages(2, 'other-'));
  expect(cache.prefix('c', 2, 0)).toBeUndefined();
});

test('ids that only differ in how conversation and generation split do not collide', () => {
  const cache = new TranscriptCache();
  cache.store('c1', 0, messages(1, 'a'));
  cache.store('c', 10, messages(1, 'b'));
  expect(cache.prefix('c1', 0, 1)).toEqual(messages(1, 'a'));
  expect(cache.prefix('c', 10, 1)).toEqual(messages(1, 'b'));
});

test('storing again replaces the entry', () => {
  const cache = new TranscriptCache();
  cache.store('c', 0, messages(1, 'old'));
  cache.store('c', 0, messages(4, 'new'));
  expect(cache.prefix('c', 0, 4)).toEqual(messages(4, 'new'));
});

test('the least recently stored conversation is evicted past maxConversations', () => {
  const cache = new TranscriptCache(2);
  cache.store('a', 0, messages(1));
  cache.store('b', 0, messages(1));
  cache.store('c', 0, messages(1));
  expect(cache.prefix('a', 0, 1)).toBeUndefined();
  expect(cache.prefix('b', 0, 1)).toBeDefined();
  expect(cache.prefix('c', 0, 1)).toBeDefined();
});

test('a prefix lookup makes the entry most recently used', () => {
  const cache = new TranscriptCache(2);
  cache.store('a', 0, messages(1));
  cache.store('b', 0, messages(1));
  expect(cache.prefix('a', 0, 1)).toBeDefined();
  cache.store('c', 0, messages(1));
  expect(cache.prefix('b', 0, 1)).toBeUndefined();
  expect(cache.prefix('a', 0, 1)).toBeDefined();
  expect(cache.prefix('c', 0, 1)).toBeDefined();
});

test('re-storing an entry makes it most recently used', () => {
  const cache = new TranscriptCache(2);
  cache.store('a', 0, messages(1));
  cache.store('b', 0, messages(1));
  cache.store('a', 0, messages(2));
  cache.store('c', 0, messages(1));
  expect(cache.prefix('b', 0, 1)).toBeUndefined();
  expect(cache.prefix('a', 0, 2)).toBeDefined();
});
