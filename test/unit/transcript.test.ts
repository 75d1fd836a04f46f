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

describe('Transcript compaction', () => {
  const assistantCalling = (id: string, index: number): Message => ({
    role: 'assistant',
    content: [{ type: 'toolCall', id, name: 'read', arguments: '{}' }],
    stopReason: 'toolUse',
    model: 'm',
    timestamp: index,
  });
  const result = (id: string, text: string, index: number): Message => ({
    role: 'toolResult',
    toolCallId: id,
    toolName: 'read',
    content: [{ type: 'text', text }],
    isError: false,
    timestamp: index,
  });
  /** `turns` turns of: user, assistant asking a tool, the tool's ~`resultChars` result. */
  const turnsOf = (turns: number, resultChars: number): Message[] =>
    Array.from({ length: turns }, (_, turn) => [
      user(`question ${turn}`, turn * 3),
      assistantCalling(`call_${turn}`, turn * 3 + 1),
      result(`call_${turn}`, 'x'.repeat(resultChars), turn * 3 + 2),
    ]).flat();

  test('tokens are estimated as characters / 4 and kept up to date', () => {
    const transcript = new Transcript();
    transcript.append(...turnsOf(2, 4_000));
    expect(transcript.estimatedTokens).toBeGreaterThan(2_000);
    expect(transcript.estimatedTokens).toBeLessThan(2_200);
  });

  test('the cut is at the start of a user turn, keeping the newest turns within the budget', () => {
    const transcript = new Transcript();
    transcript.append(...turnsOf(10, 4_000)); // ~1,000 tokens a turn
    const point = transcript.compactionPoint(3_500)!;
    expect(transcript.all()[point]).toMatchObject({ role: 'user', content: 'question 7' });
  });

  test('the newest turn is always kept, even when it alone is over the budget', () => {
    const transcript = new Transcript();
    transcript.append(...turnsOf(3, 40_000));
    expect(transcript.all()[transcript.compactionPoint(100)!]).toMatchObject({ content: 'question 2' });
  });

  test('nothing to compact when there is only one turn', () => {
    const transcript = new Transcript();
    transcript.append(...turnsOf(1, 40_000));
    expect(transcript.compactionPoint(100)).toBeUndefined();
  });

  test('compact replaces the oldest messages by the summary and starts a new generation, sending everything again', () => {
    const transcript = new Transcript();
    transcript.append(...turnsOf(4, 4_000));
    transcript.markSent(transcript.deltaForModel('conv'));
    const point = transcript.compactionPoint(2_500)!;
    const kept = transcript.all().slice(point);
    const summary = user('summary', 99);
    transcript.compact(point, summary);
    expect(transcript.all()).toEqual([summary, ...kept]);
    expect(transcript.deltaForModel('conv')).toEqual({
      conversationId: 'conv',
      generation: 1,
      base: 0,
      newMessages: [summary, ...kept],
    });
    expect(() => transcript.page({ generation: 0, from: 0, to: 1 }, 1_000)).toThrow(/generation 0 is gone/);
    expect(transcript.estimatedTokens).toBeLessThan(2_700);
  });

  test('a carried transcript keeps its generation, what was sent and its token estimate', () => {
    const transcript = new Transcript();
    transcript.append(...turnsOf(3, 400));
    transcript.compact(3, user('summary', 9));
    transcript.markSent(transcript.deltaForModel('conv'));
    const carried = new Transcript(transcript.carry());
    expect(carried.deltaForModel('conv')).toEqual(transcript.deltaForModel('conv'));
    expect(carried.estimatedTokens).toBe(transcript.estimatedTokens);
  });
});
