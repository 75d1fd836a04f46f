import type { SessionNotification } from '@agentclientprotocol/sdk';
import type { RunEnd } from '../../src/client/run-end';
import { type FollowerDeps, SessionFollower } from '../../src/acp/session-follower';
import type { AgentEvent } from '../../src/shared/events';

// What an editor is shown of a run's events, through a fake client library and a fake editor link.

type SessionUpdate = SessionNotification['update'];

const ESC = '\x1b';
const GIVES_UP_AT = Date.UTC(2026, 10, 29, 12, 30);

const retry = (attempt: number, error: string): AgentEvent => ({
  type: 'model_retry',
  seq: attempt,
  at: 0,
  run: 1,
  attempt,
  error,
  givesUpAt: GIVES_UP_AT,
});

const finished: Extract<AgentEvent, { type: 'run_finished' }> = {
  type: 'run_finished',
  seq: 9,
  at: 0,
  run: 1,
  messageIds: ['m1'],
  outcome: 'answered',
  answer: 'Back.',
};

/** Follows a run made of `events` and returns every update the editor was sent. */
async function shown(events: AgentEvent[], options: { notices?: boolean } = {}): Promise<SessionUpdate[]> {
  const updates: SessionUpdate[] = [];
  const deps: FollowerDeps = {
    agent: {
      async *followRun(): AsyncGenerator<AgentEvent, RunEnd> {
        yield* events;
        return { how: 'finished', event: finished, from: 'events' };
      },
      pendingApprovals: () => Promise.resolve([]),
      approve: () => Promise.reject(new Error('no approvals here')),
      transcriptTail: () => Promise.resolve({ transcriptLength: 0, from: 0, messages: [] }),
    } as unknown as FollowerDeps['agent'],
    link: {
      update: (update) => {
        updates.push(update);
        return Promise.resolve();
      },
      requestPermission: () => new Promise(() => undefined),
    },
    sessionId: 'conv',
    cwd: '/work',
    approver: 'alice (editor)',
    readText: () => Promise.resolve(null),
    log: () => undefined,
    ...options,
  };
  await new SessionFollower(deps).follow({ afterSeq: 0, messageId: 'm1' });
  return updates;
}

const hostileError = `the model endpoint answered 503: ${ESC}]0;pwned\x07over${ESC}[2Jloaded\r\u202Eevil\x9b31m`;

test('a model call tried again is a thought the editor shows, never part of the answer, its error printable', async () => {
  const text: AgentEvent = {
    type: 'model_text',
    seq: 4,
    at: 0,
    run: 1,
    call: 'call#3',
    offset: 0,
    text: 'Back.',
  };
  const updates = await shown([
    retry(2, hostileError),
    retry(3, 'the model endpoint answered 429'),
    text,
    finished,
  ]);
  const thoughts = updates.filter((update) => update.sessionUpdate === 'agent_thought_chunk');
  expect(thoughts).toEqual([
    {
      sessionUpdate: 'agent_thought_chunk',
      content: {
        type: 'text',
        text: `the model call failed (the model endpoint answered 503: overloadedevil31m); trying again: attempt 2, until ${new Date(GIVES_UP_AT).toISOString()}\n`,
      },
      _meta: { 'durable-agent/modelRetry': { attempt: 2, givesUpAt: GIVES_UP_AT } },
    },
    expect.objectContaining({
      content: expect.objectContaining({
        text: expect.stringContaining('answered 429); trying again: attempt 3'),
      }),
    }),
  ]);
  // The answer is the model's text alone.
  const answer = updates.filter((update) => update.sessionUpdate === 'agent_message_chunk');
  expect(answer).toEqual([
    { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'Back.' } },
  ]);
});

test('an editor that shows notices gets each retry as a warning notice instead', async () => {
  const updates = await shown([retry(2, hostileError)], { notices: true });
  expect(updates.filter((update) => update.sessionUpdate !== 'agent_message_chunk')).toEqual([
    {
      sessionUpdate: 'notice',
      severity: 'warning',
      title: 'The model call failed; trying again (attempt 2)',
      description: `the model endpoint answered 503: overloadedevil31m; the run gives up at ${new Date(GIVES_UP_AT).toISOString()}`,
      _meta: { 'durable-agent/modelRetry': { attempt: 2, givesUpAt: GIVES_UP_AT } },
    },
  ]);
});

test('a long error is cut after it is made printable: an escape sequence across the cut leaves nothing behind', async () => {
  const clipboard = `${ESC}]52;c;${'QUFB'.repeat(100)}\x07`;
  const [thought] = await shown([retry(2, `${'e'.repeat(150)}${clipboard}end`)]);
  const [notice] = await shown([retry(2, `${'e'.repeat(290)}${clipboard}end`)], { notices: true });
  for (const update of [thought, notice]) {
    const text = JSON.stringify(update);
    expect(text).not.toContain('52;c;');
    expect(text).not.toContain('QUFB');
    expect(text).not.toMatch(/\\u001b|\\u0007|\\r|\u202E|\x9b/);
  }
  expect(JSON.stringify(thought)).toContain(`${'e'.repeat(150)}end`);
  expect(JSON.stringify(notice)).toContain(`${'e'.repeat(290)}end`);
});
