import { readFileSync } from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';

/**
 * The console's script against the least DOM it needs: a page with a run-in-progress section, its
 * stream an EventSource the test drives. Every write the script makes to an element is recorded,
 * so what a model streams is seen to go in as text, never as HTML. (The browser test in
 * test/integration/console.test.ts runs the same script in Chromium.)
 */
const SCRIPT = readFileSync(path.join(__dirname, '../../src/console/assets/console.js'), 'utf8');

interface FakeElement {
  hidden: boolean;
  textContent: string;
  innerHTML: string;
  /** Every assignment to innerHTML. */
  htmlWritten: string[];
  getAttribute(name: string): string | null;
  querySelector(selector: string): FakeElement | null;
}

function element(
  attributes: Record<string, string> = {},
  inside: Record<string, FakeElement> = {},
): FakeElement {
  const htmlWritten: string[] = [];
  return {
    hidden: true,
    textContent: '',
    htmlWritten,
    get innerHTML() {
      return htmlWritten.at(-1) ?? '';
    },
    set innerHTML(html: string) {
      htmlWritten.push(html);
    },
    getAttribute: (name) => attributes[name] ?? null,
    querySelector: (selector) => inside[selector] ?? null,
  };
}

/** The script run on a conversation page: its elements, and a way to send what the stream sends. */
function runScript() {
  const text = element();
  const progress = element();
  const section = element(
    { 'data-stream': '/console/live/conversations/c-1/run' },
    {
      '.run-text': text,
      '.run-progress': progress,
    },
  );
  const listeners = new Map<string, (event: { data?: string }) => void>();
  class FakeEventSource {
    constructor(readonly url: string) {}
    addEventListener(type: string, listener: (event: { data?: string }) => void) {
      listeners.set(type, listener);
    }
    close() {}
  }
  const document = {
    querySelectorAll: (selector: string) => (selector === '[data-stream]' ? [section] : []),
    addEventListener: () => undefined,
    body: { classList: { add: () => undefined } },
  };
  vm.runInNewContext(SCRIPT, { document, EventSource: FakeEventSource, Element: class {} });
  const send = (type: string, data: unknown) => listeners.get(type)!({ data: JSON.stringify(data) });
  return { section, text, progress, send };
}

test("the model's streamed text is set as text, never as HTML, and a gap shows as one mark", () => {
  const { section, text, send } = runScript();
  const hostile = '<img src=x onerror="alert(1)">';
  send('text', { call: 'call-1', offset: 0, text: hostile });
  expect(section.hidden).toBe(false);
  expect(text.textContent).toBe(hostile);
  send('text', { call: 'call-1', offset: hostile.length, text: '<script>alert(2)</script>' });
  expect(text.textContent).toBe(`${hostile}<script>alert(2)</script>`);
  send('text', { call: 'call-2', offset: 5, text: '<b>late</b>' });
  expect(text.textContent).toBe('…<b>late</b>');
  expect(text.htmlWritten).toEqual([]);
});

test("a tool's progress is set as text, never as HTML", () => {
  const { progress, send } = runScript();
  send('progress', { toolName: '<i>exec</i>', text: '<img src=x onerror="alert(1)">' });
  expect(progress.textContent).toBe('<i>exec</i>: <img src=x onerror="alert(1)">');
  expect(progress.htmlWritten).toEqual([]);
});
