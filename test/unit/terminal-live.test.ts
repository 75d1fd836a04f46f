import { LiveLine } from '../../src/cli/terminal/live-line';
import { RunActivity } from '../../src/cli/terminal/run-activity';
import { StreamedText } from '../../src/cli/terminal/streamed-text';
import { colourWanted, styledLine } from '../../src/cli/terminal/style';
import type { AgentEvent } from '../../src/shared/events';

/** A stream that keeps what is written; a terminal when `isTTY`. */
function fakeStream(isTTY: boolean) {
  const written: string[] = [];
  const stream = {
    isTTY,
    columns: 60,
    write(text: string) {
      written.push(text);
      return true;
    },
  } as unknown as NodeJS.WriteStream;
  return { stream, text: () => written.join('') };
}

const base = { seq: 1, at: 0, run: 1 };
const piece = (call: string, offset: number, text: string): Extract<AgentEvent, { type: 'model_text' }> => ({
  ...base,
  type: 'model_text',
  call,
  offset,
  text,
});
const finished = (answer: string): Extract<AgentEvent, { type: 'run_finished' }> => ({
  ...base,
  type: 'run_finished',
  messageIds: ['m'],
  outcome: 'answered',
  answer,
});

describe('StreamedText', () => {
  test('the answer streamed whole is completed, never written twice', () => {
    const out = fakeStream(true);
    const text = new StreamedText(out.stream);
    text.add(piece('c1', 0, 'Hello, '));
    text.add(piece('c1', 7, 'wor'));
    expect(text.finish(finished('Hello, world.'))).toBe(true);
    expect(out.text()).toBe('Hello, world.\n');
  });

  test('a turn that goes on to call tools ends its line, and its words are not repeated as progress', () => {
    const out = fakeStream(true);
    const text = new StreamedText(out.stream);
    text.add(piece('c1', 0, 'Let me look.'));
    text.end();
    const response: AgentEvent = {
      ...base,
      type: 'model_response',
      iteration: 1,
      text: 'Let me look.',
      toolCalls: [{ id: 't', name: 'read' }],
    };
    expect(text.shows(response)).toBe(true);
    text.add(piece('c2', 0, 'Done'));
    expect(text.finish(finished('Done.'))).toBe(true);
    expect(out.text()).toBe('Let me look.\nDone.\n');
  });

  test('the model cannot drive the terminal: an escape sequence cut across pieces is dropped whole', () => {
    const out = fakeStream(true);
    const text = new StreamedText(out.stream);
    const pieces = ['Safe \x1b]52;c;cm0g', 'LXJm\x07text\x1b[', '2J\r, and \x1b]0;never ended'];
    let offset = 0;
    for (const next of pieces) {
      text.add(piece('c1', offset, next));
      offset += next.length;
    }
    expect(text.finish(finished(pieces.join('')))).toBe(true);
    // The unterminated title is let go at the end, without its escape.
    expect(out.text()).toBe('Safe text, and 0;never ended\n');
  });

  test('a gap is marked and the answer is then written whole', () => {
    const out = fakeStream(true);
    const text = new StreamedText(out.stream);
    text.add(piece('c1', 0, 'abc'));
    text.add(piece('c1', 10, 'klm'));
    expect(text.finish(finished('abcdefghijklmno'))).toBe(false);
    expect(out.text()).toBe('abc…klm\n');
  });

  test('a retried call starts its text again on a line of its own', () => {
    const out = fakeStream(true);
    const text = new StreamedText(out.stream);
    text.add(piece('r/1#1', 0, 'Half an ans'));
    text.add(piece('r/1#2', 0, 'A whole'));
    expect(text.finish(finished('A whole answer'))).toBe(true);
    expect(out.text()).toBe('Half an ans\nA whole answer\n');
  });
});

describe('RunActivity', () => {
  test('says what the run is doing from its events', () => {
    const activity = new RunActivity();
    expect(activity.after({ ...base, type: 'run_started', messageIds: ['m'] })).toBe('waiting for the model');
    expect(
      activity.after({
        ...base,
        type: 'approval_requested',
        toolCallId: 'a',
        toolName: 'exec',
        args: '{}',
        risk: 'high',
      }),
    ).toBe('waiting for approval of exec');
    expect(activity.awaitingApproval).toBe(true);
    activity.after({
      ...base,
      type: 'approval_decided',
      toolCallId: 'a',
      toolName: 'exec',
      decision: 'allow_once',
      by: 'ann',
    } as AgentEvent);
    expect(
      activity.after({
        ...base,
        type: 'tool_execution_start',
        toolCallId: 'a',
        toolName: 'exec',
        args: '{}',
      }),
    ).toBe('running exec');
    expect(
      activity.after({
        ...base,
        type: 'tool_execution_end',
        toolCallId: 'a',
        toolName: 'exec',
        isError: false,
        preview: '',
      }),
    ).toBe('waiting for the model');
    expect(activity.after(finished('ok'))).toBeUndefined();
  });

  test('a model call tried again says its attempt until the model answers', () => {
    const activity = new RunActivity();
    activity.after({ ...base, type: 'run_started', messageIds: ['m'] });
    const retry = { ...base, type: 'model_retry' as const, error: 'the model endpoint answered 503' };
    expect(activity.after({ ...retry, attempt: 2 })).toBe('waiting for the model (attempt 2)');
    expect(activity.after({ ...retry, attempt: 3 })).toBe('waiting for the model (attempt 3)');
    expect(activity.after({ ...base, type: 'model_response', iteration: 1, text: 'hi', toolCalls: [] })).toBe(
      'waiting for the model',
    );
  });
});

describe('LiveLine', () => {
  test('on a terminal, draws the status and keeps printed lines above it', () => {
    const out = fakeStream(true);
    let now = 1_000;
    const line = new LiveLine(out.stream, () => now);
    line.show('waiting for the model');
    now += 2_500;
    line.print('→ exec ls');
    line.close();
    expect(out.text()).toContain('waiting for the model · 0.0 s');
    expect(out.text()).toContain('\r\x1b[2K→ exec ls\n');
    expect(out.text()).toContain('waiting for the model · 2.5 s');
    expect(out.text().endsWith('\r\x1b[2K')).toBe(true);
  });

  test('elsewhere, prints plain lines and draws nothing', () => {
    const out = fakeStream(false);
    const line = new LiveLine(out.stream);
    line.show('waiting for the model');
    line.print('→ exec ls');
    line.close();
    expect(out.text()).toBe('→ exec ls\n');
  });

  test('paused by streamed text, it stays away until that resumes it', () => {
    const out = fakeStream(true);
    const line = new LiveLine(out.stream, () => 0);
    line.pause('text');
    line.show('waiting for the model');
    expect(out.text()).toBe('');
    line.resume('text');
    expect(out.text()).toContain('waiting for the model');
    line.close();
  });
});

test('colour only on a terminal, and never with NO_COLOR', () => {
  expect(colourWanted({ isTTY: true }, {})).toBe(true);
  expect(colourWanted({ isTTY: true }, { NO_COLOR: '1' })).toBe(false);
  expect(colourWanted({ isTTY: false }, {})).toBe(false);
  expect(styledLine('✓ read ok')).toBe('\x1b[32m✓ read ok\x1b[0m');
  expect(styledLine('plain')).toBe('plain');
});
