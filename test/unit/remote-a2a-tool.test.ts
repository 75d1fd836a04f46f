import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { RemoteA2AToolSource } from '../../src/a2a-remote/remote-a2a-tool-source';
import { type RemoteAgent, remoteAgentsFromEnv } from '../../src/a2a-remote/remote-agents-config';
import { MAX_CARD_BYTES } from '../../src/a2a-remote/remote-card';
import { remoteMessageId } from '../../src/a2a-remote/remote-message-id';
import type { AgentTool, ToolContext, ToolResult } from '../../src/tools/tool';
import { ToolError } from '../../src/tools/tool-error';
import { ConnectionSettingsSchema } from '../../src/shared/connection-settings';
import { externalToolsFromEnv } from '../../src/worker/external-tools';
import { type RemoteA2AAgent, startRemoteA2AAgent } from '../support/remote-a2a-agent';

/**
 * Remote A2A agents as tools, against the SDK's server and against remotes that lie: what the
 * configuration refuses, what a card may and may not do, what a task's words become.
 */

/* eslint-disable no-control-regex -- the point is that none are left */
const CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;
/* eslint-enable no-control-regex */
const HOSTILE = 'Desk\x1b[2J\x1b]0;owned\x07\x00\u202e<script>alert(1)</script>';

const servers: http.Server[] = [];
afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A remote on 127.0.0.1 that answers as `handle` says; `hits` counts its requests. */
async function hostileRemote(
  handle: (
    request: http.IncomingMessage,
    body: string,
    origin: string,
  ) => { status?: number; json?: unknown; raw?: string; headers?: Record<string, string> } | 'hang',
): Promise<{ origin: string; hits: () => number }> {
  let hits = 0;
  let origin = '';
  const server = http.createServer((request, response) => {
    hits++;
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const answer = handle(request, body, origin);
      if (answer === 'hang') return;
      response.writeHead(answer.status ?? 200, { 'content-type': 'application/json', ...answer.headers });
      response.end(answer.raw ?? JSON.stringify(answer.json));
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, hits: () => hits };
}

function cardOf(origin: string, extra: Record<string, unknown> = {}) {
  return {
    name: 'Desk',
    description: 'Answers.',
    supportedInterfaces: [{ url: `${origin}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    ...extra,
  };
}

function agentAt(origin: string, extra: Partial<RemoteAgent> = {}): RemoteAgent {
  return { name: 'desk', cardUrl: `${origin}/.well-known/agent-card.json`, timeoutMs: 10_000, ...extra };
}

const context = { conversationId: 'conv-unit', agentId: 'default', workspace: {} } as ToolContext;

async function run(
  tool: AgentTool,
  params: Record<string, unknown>,
  callId = 'call_1',
  updates: unknown[] = [],
): Promise<ToolResult> {
  return tool.execute(
    callId,
    params,
    new AbortController().signal,
    (update) => updates.push(update.details),
    context,
  );
}

async function onlyTool(source: RemoteA2AToolSource): Promise<AgentTool> {
  const { tools, warnings } = await source.discover();
  expect(warnings).toEqual([]);
  return tools[0] as AgentTool;
}

describe('configuration', () => {
  const card = 'https://agents.example/.well-known/agent-card.json';

  test('names agents by card URL, their token read from the variable the configuration names', () => {
    expect(
      remoteAgentsFromEnv({
        DURABLE_AGENT_A2A_AGENTS: JSON.stringify({
          tickets: { card, tokenEnv: 'TICKETS_TOKEN', timeoutMs: 5_000 },
        }),
        TICKETS_TOKEN: 'secret',
      }),
    ).toEqual([{ name: 'tickets', cardUrl: card, token: 'secret', timeoutMs: 5_000 }]);
    expect(remoteAgentsFromEnv({})).toEqual([]);
  });

  test('a worker started from the environment offers them, and refuses a bad list at its start', async () => {
    const start = (env: NodeJS.ProcessEnv) =>
      externalToolsFromEnv(env, ConnectionSettingsSchema.parse({}), '127.0.0.1:7233', () => undefined);
    const external = await start({ DURABLE_AGENT_A2A_AGENTS: JSON.stringify({ tickets: { card } }) });
    expect(external.sources.map((source) => source.name)).toEqual(['a2a']);
    await expect(start({ DURABLE_AGENT_A2A_AGENTS: '{"tickets":{}}' })).rejects.toThrow(
      /DURABLE_AGENT_A2A_AGENTS is not a valid A2A agent list: tickets.card/,
    );
  });

  test.each([
    [{ tickets: { card, tokenenv: 'X' } }, /unknown key "tickets.tokenenv"/],
    [{ tickets: { card: 'file:///etc/passwd' } }, /http or https/],
    [{ 'bad name': { card } }, /bad name: Invalid key/],
    [{ tickets: { card, tokenEnv: 'UNSET_TOKEN' } }, /UNSET_TOKEN, which is not set/],
  ])('refuses %j', (config, problem) => {
    expect(() => remoteAgentsFromEnv({ DURABLE_AGENT_A2A_AGENTS: JSON.stringify(config) })).toThrow(problem);
  });
});

describe('a hostile card', () => {
  test('is described to the model in printable words of bounded length', async () => {
    const remote = await hostileRemote((_request, _body, origin) => ({
      json: cardOf(origin, {
        name: HOSTILE,
        description: `${HOSTILE} ${'blah '.repeat(20_000)}`,
        skills: [{ name: HOSTILE, description: 'x' }],
      }),
    }));
    const tool = await onlyTool(new RemoteA2AToolSource([agentAt(remote.origin)]));
    expect(tool.description).not.toMatch(CONTROL);
    expect(tool.description).not.toContain('\u202e');
    expect(tool.label).not.toMatch(CONTROL);
    expect(tool.description.length).toBeLessThan(1_500);
    expect(tool.description).toContain('<script>alert(1)</script>');
  });

  test('that sends calls to another origin is refused, and that origin hears nothing', async () => {
    const elsewhere = await hostileRemote(() => ({ json: {} }));
    const remote = await hostileRemote(() => ({ json: cardOf(elsewhere.origin) }));
    const { tools, warnings } = await new RemoteA2AToolSource([
      agentAt(remote.origin, { token: 't' }),
    ]).discover();
    expect(tools).toEqual([]);
    expect(warnings).toEqual([
      expect.stringMatching(/sends calls to http:\/\/127\.0\.0\.1:\d+\/a2a, not to its own origin/),
    ]);
    expect(elsewhere.hits()).toBe(0);
  });

  test('that redirects elsewhere is not followed', async () => {
    const elsewhere = await hostileRemote((_request, _body, origin) => ({ json: cardOf(origin) }));
    const remote = await hostileRemote(() => ({
      status: 302,
      headers: { location: `${elsewhere.origin}/.well-known/agent-card.json` },
      raw: '',
    }));
    const { tools, warnings } = await new RemoteA2AToolSource([
      agentAt(remote.origin, { token: 't' }),
    ]).discover();
    expect(tools).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(elsewhere.hits()).toBe(0);
  });

  test('larger than a card may be is refused after reading no more than the bound', async () => {
    const remote = await hostileRemote((_request, _body, origin) => ({
      json: cardOf(origin, { description: 'x'.repeat(MAX_CARD_BYTES) }),
    }));
    const { tools, warnings } = await new RemoteA2AToolSource([agentAt(remote.origin)]).discover();
    expect(tools).toEqual([]);
    expect(warnings).toEqual([expect.stringContaining(`larger than ${MAX_CARD_BYTES} bytes`)]);
  });

  test('that never comes is given up on', async () => {
    const remote = await hostileRemote(() => 'hang');
    const { warnings } = await new RemoteA2AToolSource([agentAt(remote.origin)], {
      cardTimeoutMs: 300,
    }).discover();
    expect(warnings).toEqual([expect.stringMatching(/desk is not offered: .*(timeout|aborted)/i)]);
  });
});

describe('a hostile task', () => {
  /** A remote whose card is honest and whose every task is `task`. */
  async function remoteWithTask(task: (origin: string) => unknown): Promise<AgentTool> {
    const remote = await hostileRemote((request, body, origin) => {
      if (request.method === 'GET') return { json: cardOf(origin) };
      const { id, method } = JSON.parse(body) as { id: string; method: string };
      const result = method === 'SendMessage' ? { task: task(origin) } : task(origin);
      return { json: { jsonrpc: '2.0', id, result } };
    });
    return onlyTool(
      new RemoteA2AToolSource([agentAt(remote.origin)], { previousHeartbeat: () => undefined }),
    );
  }

  test('whose artifacts are huge and full of escapes reaches the model printable and cut', async () => {
    const tool = await remoteWithTask(() => ({
      id: 'task-1',
      status: { state: 'TASK_STATE_COMPLETED' },
      artifacts: [{ parts: [{ text: `${HOSTILE}\n${'y'.repeat(200_000)}` }, { data: { note: HOSTILE } }] }],
    }));
    const result = await run(tool, { message: 'hello' });
    const text = (result.content[0] as { text: string }).text;
    expect(text).not.toMatch(CONTROL);
    expect(text).toContain('<script>alert(1)</script>');
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(65_536 + 100);
    expect(text).toMatch(/cut: the remote agent sent more than/);
  });

  test('whose failure reason is hostile is a tool error in printable words', async () => {
    const tool = await remoteWithTask(() => ({
      id: 'task-1',
      status: {
        state: 'TASK_STATE_FAILED',
        message: { parts: [{ text: `${HOSTILE}${'z'.repeat(100_000)}` }] },
      },
    }));
    const error = await run(tool, { message: 'hello' }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).message).toMatch(/^the remote agent's task task-1 ended failed: Desk/);
    expect((error as ToolError).message).not.toMatch(CONTROL);
    expect((error as ToolError).message.length).toBeLessThan(10_000);
  });

  test('unreachable for a while when a call resumes is asked again, the task id heartbeated meanwhile', async () => {
    let gets = 0;
    const updates: unknown[] = [];
    let heartbeatedWhileUnreachable: unknown;
    const remote = await hostileRemote((request, body, origin) => {
      if (request.method === 'GET') return { json: cardOf(origin) };
      const { id } = JSON.parse(body) as { id: string };
      if (++gets === 1) {
        heartbeatedWhileUnreachable = updates[0];
        return { status: 503, raw: 'busy' };
      }
      return {
        json: {
          jsonrpc: '2.0',
          id,
          result: {
            id: 'task-9',
            status: { state: 'TASK_STATE_COMPLETED', message: { parts: [{ text: 'done' }] } },
          },
        },
      };
    });
    const previous = {
      kind: 'tool',
      details: { a2a: { agent: 'desk', taskId: 'task-9', state: 'working' } },
    };
    const tool = await onlyTool(
      new RemoteA2AToolSource([agentAt(remote.origin)], { previousHeartbeat: () => previous }),
    );
    expect(await run(tool, { message: 'hello' }, 'call_1', updates)).toMatchObject({
      content: [{ type: 'text', text: 'done' }],
    });
    expect(gets).toBe(2);
    // Had this attempt died too, the next one would still know the task.
    expect(heartbeatedWhileUnreachable).toEqual({
      a2a: { agent: 'desk', taskId: 'task-9', state: 'working' },
    });
  });

  test('whose id is not a printable id is refused', async () => {
    const tool = await remoteWithTask(() => ({
      id: 'task\x1b[2J 1',
      status: { state: 'TASK_STATE_COMPLETED' },
    }));
    await expect(run(tool, { message: 'hello' })).rejects.toThrow(
      /refused: SendMessage: the answer is not what A2A 1.0 sends/,
    );
  });

  test('whose answer is larger than the bound is refused, read no further', async () => {
    const remote = await hostileRemote((request, _body, origin) => {
      if (request.method === 'GET') return { json: cardOf(origin) };
      return {
        raw: `{"jsonrpc":"2.0","id":"1","result":{"task":{"id":"t","status":{"state":"TASK_STATE_COMPLETED"},"artifacts":[{"parts":[{"text":"${'w'.repeat(5 * 1024 * 1024)}"}]}]}}}`,
      };
    });
    const tool = await onlyTool(
      new RemoteA2AToolSource([agentAt(remote.origin)], { previousHeartbeat: () => undefined }),
    );
    await expect(run(tool, { message: 'hello' })).rejects.toThrow(/larger than 4194304 bytes/);
  });
});

describe('a hostile endpoint', () => {
  test('that redirects a call elsewhere is not followed: the token goes nowhere else', async () => {
    let tokenSeenElsewhere = false;
    const elsewhere = await hostileRemote((request) => {
      tokenSeenElsewhere ||= request.headers.authorization !== undefined;
      return {
        json: {
          jsonrpc: '2.0',
          id: '1',
          result: { task: { id: 't', status: { state: 'TASK_STATE_COMPLETED' } } },
        },
      };
    });
    const remote = await hostileRemote((request, _body, origin) =>
      request.method === 'GET'
        ? { json: cardOf(origin) }
        : { status: 307, headers: { location: `${elsewhere.origin}/a2a` }, raw: '' },
    );
    const tool = await onlyTool(
      new RemoteA2AToolSource([agentAt(remote.origin, { token: 'secret' })], {
        previousHeartbeat: () => undefined,
      }),
    );
    await expect(run(tool, { message: 'hello' })).rejects.toThrow(/could not be reached/);
    expect(elsewhere.hits()).toBe(0);
    expect(tokenSeenElsewhere).toBe(false);
  });

  test('that never answers is given up on', async () => {
    const remote = await hostileRemote((request, _body, origin) =>
      request.method === 'GET' ? { json: cardOf(origin) } : 'hang',
    );
    const tool = await onlyTool(
      new RemoteA2AToolSource([agentAt(remote.origin)], {
        previousHeartbeat: () => undefined,
        rpcTimeoutMs: 300,
      }),
    );
    await expect(run(tool, { message: 'hello' })).rejects.toThrow(
      /could not be reached: SendMessage did not reach/,
    );
  });
});

describe('against an agent written with the A2A SDK', () => {
  let remote: RemoteA2AAgent;
  let tool: AgentTool;
  let previous: unknown;
  beforeAll(async () => {
    remote = await startRemoteA2AAgent({ token: 'unit-token' });
    tool = await onlyTool(
      new RemoteA2AToolSource([agentAt(remote.origin, { cardUrl: remote.cardUrl, token: 'unit-token' })], {
        previousHeartbeat: () => previous,
      }),
    );
  });
  afterAll(() => remote.close());
  beforeEach(() => {
    previous = undefined;
  });

  test.each([
    ['fail: the printer is on fire', 'ended failed: the printer is on fire'],
    ['reject: not my job', 'ended rejected: not my job'],
  ])('%s is a tool error saying so', async (message, said) => {
    await expect(run(tool, { message })).rejects.toThrow(said);
  });

  test.each([
    ['a steer or an abort cancels the remote task', true, 'canceled'],
    ['a timeout or a shutdown leaves it to the next attempt', false, 'working'],
  ])('%s', async (_title, stopRequested, state) => {
    remote.hold();
    const updates: Array<{ a2a?: { taskId: string } } | undefined> = [];
    const stop = new AbortController();
    const call = tool.execute(
      `call_stop_${state}`,
      { message: 'long work' },
      stop.signal,
      (update) => updates.push(update.details as (typeof updates)[number]),
      { ...context, stopRequested: () => stopRequested },
    );
    while (updates.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    stop.abort(new Error('stopped'));
    await expect(call).rejects.toThrow();
    const taskId = updates[0]!.a2a!.taskId;
    const after = await fetch(`${remote.origin}/a2a`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'a2a-version': '1.0',
        authorization: 'Bearer unit-token',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: taskId } }),
    }).then((response) => response.json() as Promise<{ result: { status: { state: string } } }>);
    expect(after.result.status.state).toBe(`TASK_STATE_${state.toUpperCase()}`);
    remote.release();
  });

  test('an attempt after a dead worker follows the task the first one started, sending nothing', async () => {
    remote.hold();
    const updates: unknown[] = [];
    const first = run(tool, { message: 'slow one' }, 'call_resume', updates);
    while (updates.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    const sent = remote.received.length;
    expect(remote.received.at(-1)!.messageId).toBe(remoteMessageId('conv-unit', 'call_resume'));
    // What the first attempt heartbeated, as the next attempt finds it.
    previous = { kind: 'tool', toolCallId: 'call_resume', toolName: 'desk', details: updates[0] };
    const second = run(tool, { message: 'slow one' }, 'call_resume');
    remote.release();
    expect(await second).toMatchObject({ content: [{ type: 'text', text: 'remote answer to: slow one' }] });
    expect(remote.received).toHaveLength(sent);
    await first;
  });
});
