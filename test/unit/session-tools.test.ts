import { type RunEnd, type RunSought, endsRun, learnRun } from '../../src/client/run-end';
import { ConversationEndedError, ConversationNotFoundError } from '../../src/shared/conversation-errors';
import type { UserMessageInput } from '../../src/shared/conversation-api';
import type { AgentEvent } from '../../src/shared/events';
import type { Message } from '../../src/shared/messages';
import type {
  SessionDirectory,
  SessionHistory,
  SessionStatus,
} from '../../src/tools/builtin/session-directory';
import { createSessionTools } from '../../src/tools/builtin/session-tools';
import type { ToolResult } from '../../src/tools/tool';
import { Workspace } from '../../src/tools/workspace';
import { resultText, toolErrorOf } from './tool-harness';

const SELF = 'conv-self';

/** A directory of made-up sessions: `conv-b` is open, `conv-ended` has ended, nothing else exists. */
class FakeDirectory implements SessionDirectory {
  sent: Array<{ sessionId: string; message: UserMessageInput }> = [];
  events_: AgentEvent[] = [];
  transcript: Message[] = [];

  async list(limit: number) {
    return ['conv-b', SELF, 'conv-other', 'conv-c']
      .map((sessionId, index) => ({ sessionId, startTime: `2024-01-0${index + 1}T00:00:00.000Z` }))
      .slice(0, limit);
  }
  async status(sessionId: string): Promise<SessionStatus> {
    this.known(sessionId);
    if (sessionId === 'conv-ended') {
      return { sessionId, executionStatus: 'COMPLETED', startTime: 'then', closeTime: 'later' };
    }
    return {
      sessionId,
      executionStatus: 'RUNNING',
      startTime: 'then',
      conversation: {
        status: 'idle',
        runCount: 2,
        queuedMessages: 0,
        transcriptLength: 4,
        lastSeq: 9,
        pendingApprovals: 0,
      },
    };
  }
  async history(sessionId: string, last: number): Promise<SessionHistory> {
    this.known(sessionId);
    const from = Math.max(0, this.transcript.length - last);
    return { transcriptLength: this.transcript.length, from, messages: this.transcript.slice(from) };
  }
  async send(sessionId: string, message: UserMessageInput) {
    this.known(sessionId);
    if (sessionId === 'conv-ended') throw new ConversationEndedError(sessionId, 'completed');
    this.sent.push({ sessionId, message });
    return { afterSeq: 9, afterRun: 2 };
  }
  /**
   * `conv-other` belongs to another agent, and so does its sub-agent `conv-other.sub-call_1`; `conv-
   * lookalike.sub-x` is a conversation of another agent named like a sub-agent of conv-other's tree
   * but at the top of its own; everything else is the caller's.
   */
  async identityOf(sessionId: string) {
    this.known(sessionId);
    if (sessionId === 'conv-other') return { agentId: 'someone-else', root: 'conv-other' };
    if (sessionId === 'conv-other.sub-call_2') return { agentId: 'someone-else', root: 'conv-other' };
    if (sessionId === 'conv-other.sub-lookalike')
      return { agentId: 'someone-else', root: 'conv-other.sub-lookalike' };
    return { agentId: 'default', root: sessionId };
  }
  /** What the session does when its events hold no answer: ends this way, or (absent) keeps going. */
  endWithoutAnswer: RunEnd | undefined;
  /** The events after the message, read as AgentClient.followRun reads them; then it waits for `signal`. */
  async runEnd(
    _sessionId: string,
    sent: { messageId: string; afterSeq: number; afterRun: number },
    signal: AbortSignal,
  ): Promise<RunEnd> {
    let sought: RunSought = { messageId: sent.messageId, afterRun: sent.afterRun };
    for (const event of this.events_.filter((event) => event.seq > sent.afterSeq)) {
      sought = learnRun(sought, event);
      if (endsRun(event, sought)) return { how: 'finished', event, from: 'events' };
    }
    if (this.endWithoutAnswer) return this.endWithoutAnswer;
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    return { how: 'stopped' };
  }
  private known(sessionId: string) {
    const known = [
      'conv-b',
      'conv-c',
      'conv-ended',
      'conv-other',
      'conv-other.sub-call_2',
      'conv-other.sub-lookalike',
      SELF,
    ];
    if (!known.includes(sessionId)) throw new ConversationNotFoundError(sessionId);
  }
}

let directory: FakeDirectory;
let tools: ReturnType<typeof createSessionTools>;
beforeEach(() => {
  directory = new FakeDirectory();
  tools = createSessionTools(directory);
});

const workspace = new Workspace(process.cwd());
function call(name: string, args: unknown, signal = new AbortController().signal): Promise<ToolResult> {
  const tool = tools.find((candidate) => candidate.name === name)!;
  return tool.execute('call_9', tool.parameters.parse(args), signal, () => {}, {
    workspace,
    conversationId: SELF,
    agentId: 'default',
  });
}
const json = async (result: Promise<ToolResult>) => JSON.parse(resultText(await result));

test('sessions_list marks the caller and says when there are more', async () => {
  expect(await json(call('sessions_list', { limit: 2 }))).toEqual({
    sessions: [
      { sessionId: 'conv-b', startTime: '2024-01-01T00:00:00.000Z' },
      { sessionId: SELF, startTime: '2024-01-02T00:00:00.000Z', self: true },
    ],
    more: true,
  });
  expect((await json(call('sessions_list', {}))).more).toBe(false);
});

test('session_status is the caller’s own without an id, another’s with one', async () => {
  expect(await json(call('session_status', {}))).toMatchObject({
    sessionId: SELF,
    self: true,
    executionStatus: 'RUNNING',
    status: 'idle',
    runCount: 2,
  });
  expect(await json(call('session_status', { session_id: 'conv-ended' }))).toEqual({
    sessionId: 'conv-ended',
    executionStatus: 'COMPLETED',
    startTime: 'then',
    closeTime: 'later',
  });
});

test('sessions_history shows user and assistant messages, tool results only when asked', async () => {
  directory.transcript = [
    { role: 'user', content: 'hello', messageId: 'm1', timestamp: 1 },
    {
      role: 'assistant',
      content: [{ type: 'toolCall', id: 'c1', name: 'read', arguments: '{}' }],
      stopReason: 'toolUse',
      model: 'm',
      timestamp: 2,
    },
    {
      role: 'toolResult',
      toolCallId: 'c1',
      toolName: 'read',
      content: [{ type: 'text', text: 'file' }],
      isError: false,
      timestamp: 3,
    },
    {
      role: 'assistant',
      content: [{ type: 'text', text: 'x'.repeat(1_500) }],
      stopReason: 'stop',
      model: 'm',
      timestamp: 4,
    },
  ];
  const plain = await json(call('sessions_history', { session_id: 'conv-b' }));
  expect(plain.transcriptLength).toBe(4);
  expect(
    plain.messages.map((message: { index: number; role: string }) => [message.index, message.role]),
  ).toEqual([
    [0, 'user'],
    [1, 'assistant'],
    [3, 'assistant'],
  ]);
  expect(plain.messages[1]).toEqual({ index: 1, role: 'assistant', text: '', toolCalls: ['read'] });
  expect(plain.messages[2].text).toBe(`${'x'.repeat(1_000)}… [1500 characters]`);
  const withTools = await json(
    call('sessions_history', { session_id: 'conv-b', limit: 2, include_tools: true }),
  );
  expect(withTools.messages.map((message: { index: number }) => message.index)).toEqual([2, 3]);
  expect(withTools.messages[0]).toEqual({
    index: 2,
    role: 'toolResult',
    toolName: 'read',
    isError: false,
    text: 'file',
  });
});

describe('sessions_send', () => {
  test('sends a labelled message from this session and returns at once by default', async () => {
    expect(await json(call('sessions_send', { session_id: 'conv-b', text: 'ping' }))).toEqual({
      status: 'sent',
      sessionId: 'conv-b',
      messageId: `${SELF}:call_9`,
    });
    expect(directory.sent).toEqual([
      {
        sessionId: 'conv-b',
        message: {
          text: `[message from session ${SELF}]\nping`,
          messageId: `${SELF}:call_9`,
          sender: `session:${SELF}`,
        },
      },
    ]);
  });

  test('with wait_seconds it returns the other session’s answer to this message', async () => {
    directory.events_ = [
      {
        type: 'run_finished',
        seq: 10,
        at: 0,
        run: 3,
        messageIds: ['someone-else'],
        outcome: 'answered',
        answer: 'not ours',
      },
      {
        type: 'run_finished',
        seq: 11,
        at: 0,
        run: 4,
        messageIds: [`${SELF}:call_9`],
        outcome: 'answered',
        answer: 'pong',
      },
    ];
    expect(
      await json(call('sessions_send', { session_id: 'conv-b', text: 'ping', wait_seconds: 5 })),
    ).toMatchObject({
      status: 'answered',
      outcome: 'answered',
      answer: 'pong',
    });
  });

  test('a run that ends without an answer is not called answered: a refusal comes with its words', async () => {
    directory.events_ = [
      {
        type: 'run_finished',
        seq: 11,
        at: 0,
        run: 4,
        messageIds: [`${SELF}:call_9`],
        outcome: 'refused',
        answer: '',
        refusal: 'I cannot help with that.',
      },
    ];
    expect(
      await json(call('sessions_send', { session_id: 'conv-b', text: 'ping', wait_seconds: 5 })),
    ).toMatchObject({ status: 'finished', outcome: 'refused', refusal: 'I cannot help with that.' });
  });

  test('it follows the run the message joined by steering to that run’s end', async () => {
    directory.events_ = [
      { type: 'steered', seq: 10, at: 0, run: 3, messageId: `${SELF}:call_9`, text: 'ping', interrupted: [] },
      {
        type: 'run_finished',
        seq: 11,
        at: 0,
        run: 3,
        messageIds: ['first'],
        outcome: 'answered',
        answer: 'pong',
      },
    ];
    expect(
      await json(call('sessions_send', { session_id: 'conv-b', text: 'ping', wait_seconds: 5 })),
    ).toMatchObject({ status: 'answered', answer: 'pong' });
  });

  test('a session that ends without answering is said so at once', async () => {
    directory.endWithoutAnswer = { how: 'conversation_ended', executionStatus: 'TERMINATED' };
    expect(
      await json(call('sessions_send', { session_id: 'conv-b', text: 'ping', wait_seconds: 60 })),
    ).toMatchObject({ status: 'sent', note: 'session conv-b ended (terminated) without answering' });
  });

  test('without an answer in time it says the message was sent', async () => {
    const result = await json(
      call('sessions_send', { session_id: 'conv-b', text: 'ping', wait_seconds: 0.2 }),
    );
    expect(result).toMatchObject({
      status: 'sent',
      note: expect.stringMatching(/no answer yet after 0.2 s/),
    });
  });

  test('interrupted while waiting, it still reports the message as sent', async () => {
    const controller = new AbortController();
    const pending = call(
      'sessions_send',
      { session_id: 'conv-b', text: 'ping', wait_seconds: 60 },
      controller.signal,
    );
    setTimeout(() => controller.abort(new Error('steered')), 100);
    expect(JSON.parse(resultText(await pending))).toMatchObject({
      status: 'sent',
      note: expect.stringMatching(/^no answer yet;/),
    });
  });

  test('a session cannot message itself', async () => {
    const error = await toolErrorOf(call('sessions_send', { session_id: SELF, text: 'loop' }));
    expect(error.kind).toBe('InvalidArgs');
    expect(directory.sent).toEqual([]);
  });

  test('an unknown session is not created: the model is told it does not exist', async () => {
    const error = await toolErrorOf(call('sessions_send', { session_id: 'conv-new', text: 'hi' }));
    expect(error.kind).toBe('FileNotFound');
    expect(error.message).toMatch(/no session conv-new/);
  });

  test('an ended session says so', async () => {
    const error = await toolErrorOf(call('sessions_send', { session_id: 'conv-ended', text: 'hi' }));
    expect(error.kind).toBe('ExecutionFailed');
    expect(error.message).toMatch(/has ended \(completed\)/);
  });
});

test.each(['../etc', 'a/b', 'nul\u0000id', 'tab\tid', 'x'.repeat(300), '.hidden'])(
  'hostile session id %j is refused by every tool before reaching Temporal',
  async (sessionId) => {
    for (const name of ['session_status', 'sessions_history', 'sessions_send']) {
      const error = await toolErrorOf(call(name, { session_id: sessionId, text: 'x' }));
      expect(error.kind).toBe('InvalidArgs');
    }
    expect(directory.sent).toEqual([]);
  },
);

test('risk levels: listing is low risk; reading another transcript (tool output too) and messaging ask; a message is never silently repeated', () => {
  expect(Object.fromEntries(tools.map((tool) => [tool.name, [tool.risk, tool.idempotent]]))).toEqual({
    sessions_list: ['low', true],
    session_status: ['low', true],
    sessions_history: ['medium', true],
    sessions_send: ['medium', false],
  });
});

describe('scope: only the same agent and the caller’s own tree', () => {
  const as = (
    name: string,
    args: unknown,
    context: { conversationId: string; agentId: string; ancestors?: string[] },
  ) => {
    const tool = tools.find((candidate) => candidate.name === name)!;
    return tool.execute('call_9', tool.parameters.parse(args), new AbortController().signal, () => {}, {
      workspace,
      ...context,
    });
  };

  test("another agent's conversation is reported exactly like one that does not exist, by every tool", async () => {
    for (const [name, args] of [
      ['session_status', { session_id: 'conv-other' }],
      ['sessions_history', { session_id: 'conv-other', include_tools: true }],
      ['sessions_send', { session_id: 'conv-other', text: 'approve everything' }],
    ] as const) {
      const other = await toolErrorOf(call(name, args));
      const missing = await toolErrorOf(call(name, { ...args, session_id: 'conv-nowhere' }));
      expect(other.kind).toBe('FileNotFound');
      expect(other.message).toBe(missing.message.replace('conv-nowhere', 'conv-other'));
    }
    expect(directory.sent).toEqual([]);
  });

  test('sessions_list shows only the caller’s agent', async () => {
    const listed = (await json(call('sessions_list', {}))).sessions.map(
      (s: { sessionId: string }) => s.sessionId,
    );
    expect(listed).toEqual(['conv-b', SELF, 'conv-c']);
  });

  test('a sub-agent reaches its own tree whatever the agent, and nothing of another agent outside it', async () => {
    const child = {
      conversationId: 'conv-other.sub-call_1',
      agentId: 'someone-else',
      ancestors: ['conv-other'],
    };
    expect(
      JSON.parse(resultText(await as('session_status', { session_id: 'conv-other' }, child))),
    ).toMatchObject({
      sessionId: 'conv-other',
    });
    // A sibling in the same tree is reached by the tree's root, not by the shape of its id; one that
    // only looks like part of the tree (its own root) is not.
    expect(
      JSON.parse(resultText(await as('session_status', { session_id: 'conv-other.sub-call_2' }, child))),
    ).toMatchObject({ sessionId: 'conv-other.sub-call_2' });
    expect(
      (
        await toolErrorOf(
          as(
            'session_status',
            { session_id: 'conv-other.sub-lookalike' },
            { conversationId: 'conv-y', agentId: 'nobody', ancestors: ['conv-other'] },
          ),
        )
      ).kind,
    ).toBe('FileNotFound');
    const stranger = { conversationId: 'conv-x', agentId: 'nobody' };
    expect((await toolErrorOf(as('session_status', { session_id: 'conv-b' }, stranger))).kind).toBe(
      'FileNotFound',
    );
  });
});
