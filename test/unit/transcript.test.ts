import type { Message } from '../../src/shared/messages';
import { Transcript } from '../../src/workflows/transcript';

const user = (content: string, index = 0): Message => ({
  role: 'user',
  content,
  messageId: `m${index}`,
  timestamp: index,
});
const numbered = (count: number, start = 0): Message[] =>
  Array.from({ length: count }, (_, index) => user(`message ${start + index}`, start + index));
const sizeOf = (message: Message) => Buffer.byteLength(JSON.stringify(message));

describe('Transcript append and all', () => {
  test('keeps messages in order and reports its length', () => {
    const transcript = new Transcript();
    transcript.append(...numbered(2));
    transcript.append(user('third', 2));
    expect(transcript.length).toBe(3);
    expect(transcript.all()).toEqual([...numbered(2), user('third', 2)]);
  });

  test('all() is a copy', () => {
    const transcript = new Transcript();
    transcript.append(user('a'));
    transcript.all().push(user('b'));
    expect(transcript.length).toBe(1);
  });
});

describe('Transcript delta for the model', () => {
  test('the first delta carries every message from base 0', () => {
    const transcript = new Transcript();
    transcript.append(...numbered(2));
    expect(transcript.deltaForModel('conv')).toEqual({
      conversationId: 'conv',
      generation: 0,
      base: 0,
      newMessages: numbered(2),
    });
  });

  test('after markSent only new messages are sent', () => {
    const transcript = new Transcript();
    transcript.append(...numbered(2));
    const first = transcript.deltaForModel('conv');
    transcript.markSent(first);
    expect(transcript.deltaForModel('conv')).toMatchObject({ base: 2, newMessages: [] });
    transcript.append(...numbered(3, 2));
    const second = transcript.deltaForModel('conv');
    expect(second.base).toBe(2);
    expect(second.newMessages).toEqual(numbered(3, 2));
    transcript.markSent(second);
    expect(transcript.deltaForModel('conv')).toMatchObject({ base: 5, newMessages: [] });
  });

  test('without markSent (the call failed) the next delta resends the same messages', () => {
    const transcript = new Transcript();
    transcript.append(...numbered(2));
    transcript.markSent(transcript.deltaForModel('conv'));
    transcript.append(user('new', 2));
    const failed = transcript.deltaForModel('conv');
    transcript.append(user('newer', 3));
    const retry = transcript.deltaForModel('conv');
    expect(retry.base).toBe(failed.base);
    expect(retry.newMessages).toEqual([user('new', 2), user('newer', 3)]);
  });

  test('marking an older delta sent counts only what that delta carried', () => {
    const transcript = new Transcript();
    transcript.append(...numbered(2));
    const delta = transcript.deltaForModel('conv');
    transcript.append(user('arrived during the call', 2));
    transcript.markSent(delta);
    expect(transcript.deltaForModel('conv')).toMatchObject({
      base: 2,
      newMessages: [user('arrived during the call', 2)],
    });
  });

  test('the delta does not share its array with the transcript', () => {
    const transcript = new Transcript();
    transcript.append(user('a'));
    transcript.deltaForModel('conv').newMessages.push(user('b'));
    expect(transcript.length).toBe(1);
  });
});

describe('Transcript.page', () => {
  test('returns [from, to) when it fits, with next null', () => {
    const transcript = new Transcript();
    transcript.append(...numbered(5));
    expect(transcript.page({ generation: 0, from: 1, to: 4 }, 1_000_000)).toEqual({
      messages: numbered(3, 1),
      next: null,
    });
  });

  test('to past the end is clamped', () => {
    const transcript = new Transcript();
    transcript.append(...numbered(2));
    expect(transcript.page({ generation: 0, from: 0, to: 99 }, 1_000_000)).toEqual({
      messages: numbered(2),
      next: null,
    });
  });

  test('respects maxBytes and returns where to continue', () => {
    const transcript = new Transcript();
    transcript.append(...numbered(10));
    const one = sizeOf(numbered(1)[0]!);
    const page = transcript.page({ generation: 0, from: 0, to: 10 }, one * 3 + 1);
    expect(page.messages).toEqual(numbered(3));
    expect(page.next).toBe(3);
    const rest = transcript.page({ generation: 0, from: page.next!, to: 10 }, one * 3 + 1);
    expect(rest).toEqual({ messages: numbered(3, 3), next: 6 });
  });

  test('paging through collects every message exactly once', () => {
    const transcript = new Transcript();
    const all = Array.from({ length: 25 }, (_, index) => user('x'.repeat(index * 7), index));
    transcript.append(...all);
    const seen: Message[] = [];
    let from: number | null = 0;
    let pages = 0;
    while (from !== null) {
      const page = transcript.page({ generation: 0, from, to: all.length }, 400);
      seen.push(...page.messages);
      from = page.next;
      pages++;
    }
    expect(seen).toEqual(all);
    expect(pages).toBeGreaterThan(1);
  });

  test('always returns at least one message, even one bigger than maxBytes', () => {
    const transcript = new Transcript();
    transcript.append(user('y'.repeat(5_000), 0), user('small', 1));
    expect(transcript.page({ generation: 0, from: 0, to: 2 }, 100)).toEqual({
      messages: [user('y'.repeat(5_000), 0)],
      next: 1,
    });
  });

  test('the page stays within maxBytes of UTF-8 JSON for multi-byte text', () => {
    const transcript = new Transcript();
    // 300 characters but 900 bytes each: counting characters would let three fit into 1,500 bytes.
    transcript.append(user('€'.repeat(300), 0), user('€'.repeat(300), 1), user('€'.repeat(300), 2));
    const maxBytes = 1_500;
    const page = transcript.page({ generation: 0, from: 0, to: 3 }, maxBytes);
    const bytes = page.messages.reduce((sum, message) => sum + sizeOf(message), 0);
    expect(bytes).toBeLessThanOrEqual(maxBytes);
    expect(page.messages.length).toBeGreaterThanOrEqual(1);
    expect(page.next).toBe(page.messages.length);
  });

  test('an empty range is an empty final page', () => {
    const transcript = new Transcript();
    transcript.append(...numbered(3));
    expect(transcript.page({ generation: 0, from: 3, to: 3 }, 10)).toEqual({ messages: [], next: null });
  });

  test('a stale generation throws', () => {
    const transcript = new Transcript();
    transcript.append(...numbered(1));
    expect(() => transcript.page({ generation: 1, from: 0, to: 1 }, 1_000)).toThrow(/generation 1 is gone/);
    expect(() => transcript.page({ generation: -1, from: 0, to: 1 }, 1_000)).toThrow(/generation/);
  });
});
