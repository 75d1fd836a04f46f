import type { AgUiEvent, AgUiState } from '../../src/gateway/ag-ui/ag-ui-events';
import { type AgUiLookups, AgUiTranslator } from '../../src/gateway/ag-ui/ag-ui-translator';
import type { AgentEvent } from '../../src/shared/events';

/**
 * The state a run begins with is read by queries, which wait for the conversation's workflow task;
 * streamed text does not wait for them, and a state read while events came is read again.
 */
type State = Omit<AgUiState, 'lastEventId'>;

const state = (status: string): State => ({
  conversationId: 'c1',
  status,
  pendingApprovals: [],
  pendingClientToolCalls: [],
  budget: null,
  spent: null,
});

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => (resolve = settle));
  return { promise, resolve };
}

function translatorWith(snapshots: Array<Promise<State>>) {
  const written: AgUiEvent[] = [];
  let reads = 0;
  const lookups: AgUiLookups = {
    assistantMessage: () => Promise.resolve(undefined),
    waiting: () => Promise.resolve({ approvals: [], clientCalls: [] }),
    snapshot: () => {
      const next = snapshots[reads++];
      if (!next) throw new Error('no more snapshots scripted');
      return next;
    },
  };
  const translator = new AgUiTranslator(
    { threadId: 'c1', runId: 'r1' },
    { seq: 2 },
    lookups,
    (event) => written.push(event),
    { clientToolNames: new Set(), afterRun: 0 },
  );
  return { translator, written, reads: () => reads };
}

const text = (seq: number, offset: number, chars: string): AgentEvent => ({
  type: 'model_text',
  seq,
  at: 0,
  run: 1,
  call: 'call-1',
  offset,
  text: chars,
});
const runStarted = (seq: number): AgentEvent => ({
  type: 'run_started',
  seq,
  at: 0,
  run: 1,
  messageIds: ['m1'],
});
const flush = () => new Promise((resolve) => setImmediate(resolve));

test('streamed text is written while the first state is still being read; the state follows once read', async () => {
  const first = deferred<State>();
  const { translator, written } = translatorWith([first.promise]);
  translator.begin();
  await translator.handle(text(2, 0, 'Hello'));
  expect(written.map((event) => event.type)).toEqual([
    'RUN_STARTED',
    'TEXT_MESSAGE_START',
    'TEXT_MESSAGE_CONTENT',
  ]);

  first.resolve(state('running'));
  await flush();
  await translator.handle(text(2, 5, ' there'));
  expect(written.map((event) => event.type)).toEqual([
    'RUN_STARTED',
    'TEXT_MESSAGE_START',
    'TEXT_MESSAGE_CONTENT',
    'STATE_SNAPSHOT',
    'TEXT_MESSAGE_CONTENT',
  ]);
  const snapshot = written[3] as Extract<AgUiEvent, { type: 'STATE_SNAPSHOT' }>;
  expect(snapshot.snapshot).toMatchObject({ status: 'running', lastEventId: '2~call-1~5' });
});

test('a first state read while events came is read again before it is shown, and that second reading is shown', async () => {
  const stale = deferred<State>();
  const fresh = deferred<State>();
  const { translator, written, reads } = translatorWith([stale.promise, fresh.promise]);
  translator.begin();
  await translator.handle(runStarted(3));
  stale.resolve(state('idle'));
  await flush();
  await translator.handle(text(3, 0, 'Hi'));
  expect(reads()).toBe(2);
  expect(written.some((event) => event.type === 'STATE_SNAPSHOT')).toBe(false);

  fresh.resolve(state('running'));
  await flush();
  await translator.handle(text(3, 2, '!'));
  const snapshots = written.filter((event) => event.type === 'STATE_SNAPSHOT');
  expect(snapshots).toEqual([
    { type: 'STATE_SNAPSHOT', snapshot: expect.objectContaining({ status: 'running' }) },
  ]);
});

test('a first state that cannot be read fails the stream at the next event', async () => {
  const { translator } = translatorWith([Promise.reject(new Error('conversation gone'))]);
  translator.begin();
  await flush();
  await expect(translator.handle(text(2, 0, 'Hi'))).rejects.toThrow('conversation gone');
});
