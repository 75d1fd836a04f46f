/// <reference lib="dom" />
// The page: an AG-UI client (`@ag-ui/client`'s HttpAgent) on the example's server, which passes the
// run to the durable-agent gateway with its token. What the model writes is shown with textContent
// only: it is data, never markup.
import { HttpAgent } from '@ag-ui/client';

interface Interrupt {
  id: string;
  message?: string;
  toolCallId?: string;
  metadata?: { toolName?: string; arguments?: string; argumentsSha256?: string };
}

const messages = document.getElementById('messages')!;
const approvals = document.getElementById('approvals')!;
const status = document.getElementById('status')!;
const form = document.getElementById('ask') as HTMLFormElement;
const input = document.getElementById('text') as HTMLInputElement;

// One conversation per tab: the thread id is kept, so a reload goes on where it was.
const threadId = sessionStorage.getItem('threadId') ?? `agui-${crypto.randomUUID()}`;
sessionStorage.setItem('threadId', threadId);
const agent = new HttpAgent({ url: '/ag-ui', threadId });

// A tool the page carries out itself: the run waits (durably) for its result.
const pageTools = [
  {
    name: 'page_title',
    description: "Returns the title of the user's page.",
    parameters: { type: 'object', properties: {} },
  },
];

function show(className: string, text: string): HTMLElement {
  const element = document.createElement('div');
  element.className = `message ${className}`;
  element.textContent = text;
  messages.append(element);
  return element;
}

/** One run of the agent; again while the run leaves the page's tools to answer. */
async function run(resume?: Array<{ interruptId: string; status: 'resolved'; payload: unknown }>) {
  const shown = new Map<string, HTMLElement>();
  let interrupts: Interrupt[] = [];
  let pending: string[] = [];
  status.textContent = 'working…';
  await agent.runAgent(
    { tools: pageTools, ...(resume ? { resume } : {}) },
    {
      onTextMessageStartEvent: ({ event }) => void shown.set(event.messageId, show('assistant', '')),
      onTextMessageContentEvent: ({ event }) => {
        const element = shown.get(event.messageId);
        if (element) element.textContent += event.delta;
      },
      onRunFinishedEvent: ({ event }) => {
        const outcome = (
          event as { outcome?: { type: string; interrupts?: Interrupt[]; pendingToolCallIds?: string[] } }
        ).outcome;
        interrupts = outcome?.interrupts ?? [];
        pending = outcome?.pendingToolCallIds ?? [];
      },
    },
  );
  status.textContent = '';
  for (const interrupt of interrupts) ask(interrupt);
  if (pending.length) {
    for (const toolCallId of pending)
      agent.addMessage({ id: crypto.randomUUID(), role: 'tool', toolCallId, content: document.title });
    await run();
  }
}

/** A pending approval: what the model wants to run, and two buttons. The decision names the arguments' SHA-256. */
function ask(interrupt: Interrupt) {
  const box = document.createElement('div');
  box.className = 'approval';
  const question = document.createElement('p');
  question.textContent = interrupt.message ?? 'Allow?';
  const args = document.createElement('pre');
  args.textContent = interrupt.metadata?.arguments ?? '';
  box.append(question, args);
  for (const [label, decision] of [
    ['Allow', 'allow_once'],
    ['Reject', 'reject_once'],
  ] as const) {
    const button = document.createElement('button');
    button.textContent = label;
    button.addEventListener('click', () => {
      box.remove();
      const payload = { decision, argumentsSha256: interrupt.metadata?.argumentsSha256 };
      void run([{ interruptId: interrupt.id, status: 'resolved', payload }]).catch(fail);
    });
    box.append(button);
  }
  approvals.append(box);
}

function fail(error: unknown) {
  status.textContent = `error: ${error instanceof Error ? error.message : String(error)}`;
}

form.addEventListener('submit', (event) => {
  event.preventDefault();
  const text = input.value.trim();
  if (!text) return;
  input.value = '';
  show('user', text);
  agent.addMessage({ id: crypto.randomUUID(), role: 'user', content: text });
  void run().catch(fail);
});
