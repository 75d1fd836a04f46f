import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { type GatewayDeps, createGateway } from '../../src/http/gateway-app';
import { GatewayTokens } from '../../src/gateway/gateway-tokens';
import { mcpServersFromEnv } from '../../src/mcp/mcp-config-from-env';
import { ConversationNotFoundError } from '../../src/shared/conversation-errors';
import type { ApprovalDecision } from '../../src/shared/approvals';
import type { AbortInput, ApprovalModeInput } from '../../src/shared/conversation-api';
import type { ConversationOptionsInput } from '../../src/shared/conversation-options';
import type { AgentEvent } from '../../src/shared/events';
import type { GatewayToken } from '../../src/gateway/gateway-api';
import { webhooksFromEnv } from '../../src/worker/webhook-settings';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { waitFor } from '../support/test-worker';
import { waitForEvent } from '../support/wait-for-event';

/**
 * The gateway and the client library as a boundary: what a service or an operator sends is taken
 * exactly or refused by name (a misspelled key never drops the limit it meant), a token that may
 * send but not start cannot bring a conversation into being, a token is good only as long as it is
 * good (streams included), and one token cannot hold open more streams than it is allowed.
 */
const gateways: FastifyInstance[] = [];
// Declared before the harness's own, so the gateways (and their streams' calls) stop before its client does.
afterAll(async () => {
  for (const app of gateways) await app.close();
});
const harness = useNockedHarness([]);
const TOKENS = {
  admin: `tok-admin-${randomUUID()}`,
  sendOnly: `tok-send-${randomUUID()}`,
  startSend: `tok-start-send-${randomUUID()}`,
  otherAgent: `tok-other-agent-${randomUUID()}`,
  prefixed: `tok-prefixed-${randomUUID()}`,
};
const BASE_TOKENS: GatewayToken[] = [
  { name: 'admin', token: TOKENS.admin, actions: ['*'] },
  { name: 'sender', token: TOKENS.sendOnly, actions: ['send', 'steer', 'status', 'events'] },
  { name: 'starter', token: TOKENS.startSend, actions: ['start', 'send', 'steer'] },
  { name: 'other-team', token: TOKENS.otherAgent, actions: ['start', 'send'], agents: ['other-agent'] },
  { name: 'mine', token: TOKENS.prefixed, actions: ['start', 'send'], conversationPrefixes: ['mine-'] },
];

const streams: OpenStream[] = [];
let base: Gateway;

interface Gateway {
  url: string;
  tokens: GatewayTokens;
}

async function openGateway(tokens: GatewayToken[], deps: Partial<GatewayDeps> = {}): Promise<Gateway> {
  const gatewayTokens = new GatewayTokens(tokens);
  const app = createGateway({ agent: harness().agent, tokens: gatewayTokens, eventPollMs: 50, ...deps });
  gateways.push(app);
  return { url: await app.listen({ port: 0, host: '127.0.0.1' }), tokens: gatewayTokens };
}

beforeAll(async () => {
  base = await openGateway(BASE_TOKENS);
});

afterEach(async () => {
  for (const stream of streams.splice(0)) await stream.close();
});

async function call(gateway: Gateway, method: string, route: string, token: string, body?: unknown) {
  const response = await fetch(`${gateway.url}${route}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Whether Temporal knows a workflow with this id: what "nothing was started" means. */
async function workflowExists(id: string): Promise<boolean> {
  try {
    await harness().client.workflow.getHandle(id).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}

/** A conversation that exists and waits for its first message (no model call). */
async function idleConversation(prefix = 'gw-'): Promise<string> {
  return harness().agent.start(`${prefix}${randomUUID()}`);
}

/** Every model call of this file answers briefly. */
function answerEverything(times = 20) {
  nockModel(Array.from({ length: times }, () => ({ text: 'ok' })));
}

interface OpenStream {
  status: number;
  /** The JSON body of a refused stream. */
  body?: Record<string, unknown>;
  text: () => string;
  /** Resolves when the server has ended the stream (or it was closed here). */
  ended: Promise<void>;
  close: () => Promise<void>;
}

async function openStream(gateway: Gateway, token: string, id: string): Promise<OpenStream> {
  const controller = new AbortController();
  const response = await fetch(`${gateway.url}/v1/conversations/${id}/events`, {
    headers: { authorization: `Bearer ${token}` },
    signal: controller.signal,
  });
  if (response.status !== 200) {
    const body = (await response.json()) as Record<string, unknown>;
    return { status: response.status, body, text: () => '', ended: Promise.resolve(), close: async () => {} };
  }
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const ended = (async () => {
    for (;;) {
      const next = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (next.done) return;
      text += decoder.decode(next.value, { stream: true });
    }
  })();
  const stream: OpenStream = {
    status: 200,
    text: () => text,
    ended,
    close: async () => {
      controller.abort();
      await ended;
    },
  };
  streams.push(stream);
  await waitFor(
    async () => (text.includes(': stream open') ? true : undefined),
    'the stream to open',
    10_000,
    10,
  );
  return stream;
}

/** The named events of a stream's text, in order: `{ event, data }`. */
function framesOf(text: string): Array<{ event: string; data: Record<string, unknown> }> {
  return text
    .split('\n\n')
    .map((frame) => ({ event: /^event: (.*)$/m.exec(frame)?.[1], data: /^data: (.*)$/m.exec(frame)?.[1] }))
    .filter((frame): frame is { event: string; data: string } => frame.event !== undefined)
    .map(({ event, data }) => ({ event, data: JSON.parse(data) as Record<string, unknown> }));
}

describe('strict schemas: an unknown key is refused by name, never dropped', () => {
  const tokenFile = (json: unknown) => {
    const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'gw-tokens-')), 'tokens.json');
    writeFileSync(file, JSON.stringify(json));
    return file;
  };
  const good = { name: 'svc', token: 'a-plain-token-long-enough', actions: ['send'] };

  test('a token file with a misspelled key, at the top or in a token, does not load', () => {
    expect(() => GatewayTokens.fromFile(tokenFile({ tokens: [good] }))).not.toThrow();
    for (const [json, key] of [
      [{ tokens: [{ ...good, agent: ['billing'] }] }, 'tokens.0.agent'],
      [{ tokens: [{ ...good, conversationPrefix: ['billing-'] }] }, 'tokens.0.conversationPrefix'],
      [
        { tokens: [good, { ...good, token: 'another-plain-token-x', expires: '2020-01-01T00:00:00Z' }] },
        'tokens.1.expires',
      ],
      [{ tokens: [{ ...good, action: ['*'] }] }, 'tokens.0.action'],
      [{ tokens: [good], expiresAt: '2020-01-01T00:00:00Z' }, 'expiresAt'],
      [{ tokenz: [good] }, 'tokenz'],
    ] as const) {
      expect(() => GatewayTokens.fromFile(tokenFile(json))).toThrow(
        new RegExp(`gateway token file .* is wrong: .*unknown key "${key.replace(/\./g, '\\.')}"`),
      );
    }
  });

  test("an operator's webhook and MCP files with a misspelled key do not load", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'gw-config-'));
    const webhooks = path.join(dir, 'webhooks.json');
    const hook = { url: 'http://127.0.0.1:9/hooks', events: ['run_finished'], secret: 's'.repeat(16) };
    writeFileSync(webhooks, JSON.stringify({ webhooks: [{ ...hook, event: ['run_failed'] }] }));
    expect(() => webhooksFromEnv({ DURABLE_AGENT_WEBHOOKS: webhooks })).toThrow(
      /unknown key "webhooks\.0\.event"/,
    );
    writeFileSync(webhooks, JSON.stringify({ webhooks: [hook], hooks: [] }));
    expect(() => webhooksFromEnv({ DURABLE_AGENT_WEBHOOKS: webhooks })).toThrow(/unknown key "hooks"/);

    const mcp = (servers: unknown) => () =>
      mcpServersFromEnv({ DURABLE_AGENT_MCP_SERVERS: JSON.stringify(servers) });
    expect(mcp({ fs: { command: 'npx', timeoutMS: 5 } })).toThrow(/unknown key "fs\.timeoutMS"/);
    expect(mcp({ web: { url: 'http://127.0.0.1:9/mcp', header: { a: 'b' } } })).toThrow(
      /unknown key "web\.header"/,
    );
  });

  test('start bodies with an unknown key, at the top or in nested options, are 400 naming it, and nothing starts', async () => {
    for (const [extra, key] of [
      [{ extra: true }, 'extra'],
      [{ options: { execSecurty: 'sandbox' } }, 'options.execSecurty'],
      [{ options: { approval: { mod: 'ask' } } }, 'options.approval.mod'],
      [{ options: { approval: { approvers: ['ops'], timeoutMS: 1_000 } } }, 'options.approval.timeoutMS'],
      [{ options: { subAgents: { maxDeep: 0 } } }, 'options.subAgents.maxDeep'],
      [{ options: { compaction: { maxToken: 5_000 } } }, 'options.compaction.maxToken'],
      [{ options: { agentID: 'other-agent' } }, 'options.agentID'],
    ] as const) {
      const id = `gw-strict-${randomUUID()}`;
      const refused = await call(base, 'POST', '/v1/conversations', TOKENS.admin, {
        id,
        text: 'hi',
        ...extra,
      });
      expect(refused).toMatchObject({
        status: 400,
        body: { error: expect.stringContaining(`unknown key "${key}"`) },
      });
      expect(await workflowExists(id)).toBe(false);
    }
    // The same options, spelled right, are taken.
    const id = `gw-strict-${randomUUID()}`;
    const started = await call(base, 'POST', '/v1/conversations', TOKENS.admin, {
      id,
      options: { execSecurity: 'sandbox', approval: { mode: 'ask' }, subAgents: { maxDepth: 0 } },
    });
    expect(started).toMatchObject({ status: 201, body: { conversationId: id } });
    expect(await workflowExists(id)).toBe(true);
  });

  test('a token limited to one agent cannot reach into another tree: ancestors and sub-agent ids are refused, nothing starts', async () => {
    const victim = `gw-victim-${randomUUID()}`;
    for (const [token, body] of [
      [
        TOKENS.otherAgent,
        { id: `gw-forger-${randomUUID()}`, options: { agentId: 'other-agent', ancestors: [victim] } },
      ],
      [
        TOKENS.otherAgent,
        {
          id: `gw-forger-${randomUUID()}`,
          options: { agentId: 'other-agent', ancestors: [victim] },
          text: 'hi',
        },
      ],
      [TOKENS.admin, { id: `gw-forger-${randomUUID()}`, options: { ancestors: [victim, 'x'] } }],
      [TOKENS.otherAgent, { id: `${victim}.sub-call_1`, options: { agentId: 'other-agent' } }],
      [TOKENS.admin, { id: `${victim}.sub-call_2`, text: 'hi' }],
    ] as const) {
      const refused = await call(base, 'POST', '/v1/conversations', token, body);
      expect({ body, refused }).toMatchObject({
        refused: {
          status: 400,
          body: { error: expect.stringMatching(/ancestors is set by the runtime|belong to sub-agents/) },
        },
      });
      expect(await workflowExists(body.id)).toBe(false);
    }
    // Messaging a sub-agent id that does not exist cannot start one either.
    const sent = await call(base, 'POST', `/v1/conversations/${victim}.sub-call_3/messages`, TOKENS.admin, {
      text: 'hi',
    });
    expect(sent.status).toBe(400);
    expect(await workflowExists(`${victim}.sub-call_3`)).toBe(false);
  });

  test('message, steer, approve, abort and end bodies with an unknown key are 400 naming it, and the conversation is untouched', async () => {
    const id = await idleConversation();
    const before = await harness().agent.status(id);
    const refusals: Array<[string, unknown, string]> = [
      ['messages', { text: 'hi', sender: 'admin' }, 'sender'],
      ['messages', { text: 'hi', images: [] }, 'images'],
      ['messages', { text: 'hi', messageID: 'm-1' }, 'messageID'],
      ['steer', { text: 'stop that', wait: false }, 'wait'],
      ['approvals/call_x', { decision: 'allow_once', argumentsSha256: 'a'.repeat(64), by: 'root' }, 'by'],
      ['approvals/call_x', { decision: 'allow_once', argumentSha256: 'a'.repeat(64) }, 'argumentSha256'],
      ['abort', { reasn: 'x' }, 'reasn'],
      ['end', { reason: 'done', now: true }, 'now'],
    ];
    for (const [route, body, key] of refusals) {
      expect(await call(base, 'POST', `/v1/conversations/${id}/${route}`, TOKENS.admin, body)).toMatchObject({
        status: 400,
        body: { error: expect.stringMatching(new RegExp(`^invalid body: .*unknown key "${key}"`)) },
      });
    }
    expect(await harness().agent.status(id)).toEqual(before);
    expect((await harness().agent.execution(id)).executionStatus).toBe('RUNNING');
  });

  test('the client library refuses unknown keys in options and payloads, and starts nothing', async () => {
    const { agent } = harness();
    const options = (value: unknown) => value as ConversationOptionsInput;
    const id = `gw-client-${randomUUID()}`;
    await expect(agent.start(id, options({ execSecurty: 'sandbox' }))).rejects.toThrow(
      /^invalid conversation options: unknown key "execSecurty"$/,
    );
    await expect(agent.send(id, 'hi', { options: options({ approval: { mod: 'ask' } }) })).rejects.toThrow(
      /^invalid conversation options: unknown key "approval\.mod"$/,
    );
    await expect(agent.send(id, 'hi', { options: options({ subAgents: { maxDeep: 0 } }) })).rejects.toThrow(
      /unknown key "subAgents\.maxDeep"/,
    );
    expect(await workflowExists(id)).toBe(false);

    const idle = await idleConversation();
    await expect(agent.abort(idle, { reason: 'x', force: true } as AbortInput)).rejects.toThrow(
      /^invalid abort: unknown key "force"$/,
    );
    await expect(
      agent.approve(idle, {
        toolCallId: 'c',
        decision: 'allow_once',
        by: 'a',
        scope: 'all',
      } as ApprovalDecision),
    ).rejects.toThrow(/^invalid approval decision: unknown key "scope"$/);
    await expect(
      agent.setApprovalMode(idle, { mode: 'auto', tools: {} } as ApprovalModeInput),
    ).rejects.toThrow(/^invalid approval mode: unknown key "tools"$/);
  });

  test('the OpenAPI document says the bodies take no other keys', async () => {
    const document = (await (await fetch(`${base.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { requestBody: { content: Record<string, { schema: never }> } }>>;
    };
    const schema = document.paths['/v1/conversations']!.post!.requestBody.content['application/json']!
      .schema as {
      additionalProperties: boolean;
      properties: { options: { additionalProperties: boolean } };
    };
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.options.additionalProperties).toBe(false);
  });
});

describe('sending is not starting', () => {
  test('a token that may send but not start gets 404 for a conversation that does not exist, and none is started', async () => {
    for (const route of ['messages', 'steer']) {
      const id = `gw-ghost-${randomUUID()}`;
      expect(
        await call(base, 'POST', `/v1/conversations/${id}/${route}`, TOKENS.sendOnly, { text: 'hi' }),
      ).toMatchObject({
        status: 404,
        body: { error: `conversation ${id} not found` },
      });
      expect(await workflowExists(id)).toBe(false);
    }
    // It still sends to one that exists.
    answerEverything();
    const id = await idleConversation();
    expect(
      await call(base, 'POST', `/v1/conversations/${id}/messages`, TOKENS.sendOnly, { text: 'hi' }),
    ).toMatchObject({
      status: 202,
      body: { conversationId: id },
    });
  });

  test('a token that may also start starts it, through the same check as a start', async () => {
    answerEverything();
    const id = `gw-new-${randomUUID()}`;
    expect(
      await call(base, 'POST', `/v1/conversations/${id}/messages`, TOKENS.startSend, { text: 'hi' }),
    ).toMatchObject({
      status: 202,
      body: { conversationId: id },
    });
    expect((await harness().agent.execution(id)).executionStatus).toBe('RUNNING');
    expect(await harness().agent.status(id)).toMatchObject({ agentId: 'default' });

    // Steering never starts a conversation, whoever asks.
    const steered = `gw-new-${randomUUID()}`;
    expect(
      await call(base, 'POST', `/v1/conversations/${steered}/steer`, TOKENS.startSend, { text: 'hi' }),
    ).toMatchObject({
      status: 404,
    });
    expect(await workflowExists(steered)).toBe(false);

    // A token whose start would be refused (another agent; another prefix) starts nothing.
    const otherAgent = `gw-new-${randomUUID()}`;
    expect(
      await call(base, 'POST', `/v1/conversations/${otherAgent}/messages`, TOKENS.otherAgent, { text: 'hi' }),
    ).toMatchObject({
      status: 404,
    });
    expect(await workflowExists(otherAgent)).toBe(false);
    const elsewhere = `theirs-${randomUUID()}`;
    expect(
      await call(base, 'POST', `/v1/conversations/${elsewhere}/messages`, TOKENS.prefixed, { text: 'hi' }),
    ).toMatchObject({
      status: 403,
    });
    expect(await workflowExists(elsewhere)).toBe(false);
    const mine = `mine-${randomUUID()}`;
    expect(
      await call(base, 'POST', `/v1/conversations/${mine}/messages`, TOKENS.prefixed, { text: 'hi' }),
    ).toMatchObject({
      status: 202,
    });
    expect(await workflowExists(mine)).toBe(true);
  });

  test('AgentClient.send with start: false never starts a conversation', async () => {
    const id = `gw-ghost-${randomUUID()}`;
    await expect(harness().agent.send(id, 'hi', { start: false })).rejects.toBeInstanceOf(
      ConversationNotFoundError,
    );
    expect(await workflowExists(id)).toBe(false);
    await expect(harness().agent.steer(id, 'hi', { wait: false })).rejects.toBeInstanceOf(
      ConversationNotFoundError,
    );
    expect(await workflowExists(id)).toBe(false);

    answerEverything();
    const idle = await idleConversation();
    expect(await harness().agent.send(idle, 'hi', { start: false })).toMatchObject({ started: false });
  });
});

describe('a token is checked on every event it is streamed', () => {
  test('a stream opened before its token expires ends with a 401 error event when it does, and carries nothing after', async () => {
    answerEverything();
    const token = `tok-expiring-${randomUUID()}`;
    const id = await idleConversation();
    // Long enough for one run to be streamed on a loaded machine before the token expires.
    const expiresAt = new Date(Date.now() + 8_000).toISOString();
    // Keep-alives an hour apart: while the conversation is quiet only the expiry itself can end the stream.
    const gateway = await openGateway([{ name: 'brief', token, actions: ['events'], expiresAt }], {
      keepAliveMs: 60 * 60 * 1_000,
    });
    const stream = await openStream(gateway, token, id);
    await harness().agent.send(id, 'before the token expires');
    await waitFor(
      async () => (/event: run_finished/.test(stream.text()) ? true : undefined),
      'the run to be streamed while the token is good',
    );

    await waitFor(
      async () => (/event: error/.test(stream.text()) ? true : undefined),
      'the error event of the expired token',
    );
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(expiresAt));

    // The conversation goes on, then ends. A stream still served would carry the second run's events
    // and then the end of the conversation, in that order, before it closed: once it has closed,
    // everything it was going to carry is here.
    await harness().agent.send(id, 'after the token expired');
    await waitForEvent(harness().client.workflow.getHandle(id), 'run_finished', (event) => event.run === 2);
    await harness().agent.end(id);
    await stream.ended;
    const text = stream.text();
    expect(framesOf(text.slice(text.indexOf('event: error')))).toEqual([
      {
        event: 'error',
        data: { error: expect.stringMatching(/^the token brief expired at /), status: 401 },
      },
    ]);
    expect(framesOf(text).filter((frame) => frame.data.run === 2)).toEqual([]);
    // Nor does the token open another.
    expect((await openStream(gateway, token, id)).status).toBe(401);
  });

  test('a token revoked while its stream is open fails the next event, and the next keep-alive', async () => {
    answerEverything();
    const eventToken: GatewayToken = {
      name: 'events-only',
      token: `tok-ev-${randomUUID()}`,
      actions: ['events'],
    };
    const quietToken: GatewayToken = {
      name: 'quiet',
      token: `tok-quiet-${randomUUID()}`,
      actions: ['events'],
    };
    // Keep-alives an hour apart: only an event can find the revocation.
    const byEvent = await openGateway([eventToken], { keepAliveMs: 60 * 60 * 1_000 });
    // Keep-alives every 100 ms and no events: only a keep-alive can.
    const byKeepAlive = await openGateway([quietToken], { keepAliveMs: 100 });

    const busy = await idleConversation();
    const quiet = await idleConversation();
    const eventStream = await openStream(byEvent, eventToken.token!, busy);
    const quietStream = await openStream(byKeepAlive, quietToken.token!, quiet);
    byEvent.tokens.revoke(eventToken);
    byKeepAlive.tokens.revoke(quietToken);

    await quietStream.ended;
    expect(framesOf(quietStream.text())).toEqual([
      { event: 'error', data: { error: 'the token quiet has been revoked', status: 401 } },
    ]);

    expect(framesOf(eventStream.text())).toEqual([]);
    await harness().agent.send(busy, 'an event for a revoked token');
    await eventStream.ended;
    expect(framesOf(eventStream.text())).toEqual([
      { event: 'error', data: { error: 'the token events-only has been revoked', status: 401 } },
    ]);
  });
});

describe('event streams per token are capped', () => {
  const streamer: GatewayToken = {
    name: 'streamer',
    token: `tok-streamer-${randomUUID()}`,
    actions: ['events'],
  };
  const neighbour: GatewayToken = {
    name: 'neighbour',
    token: `tok-neighbour-${randomUUID()}`,
    actions: ['events'],
  };

  test('the N+1th stream of a token is 429; closing one, or its conversation ending, frees a slot', async () => {
    const gateway = await openGateway([streamer, neighbour], { maxStreamsPerToken: 3 });
    const id = await idleConversation();
    const open = [];
    for (let index = 0; index < 3; index++) open.push(await openStream(gateway, streamer.token!, id));
    expect(await openStream(gateway, streamer.token!, id)).toMatchObject({
      status: 429,
      body: { error: 'the token streamer has 3 event streams open, the most it may have: close one first' },
    });
    // Another token has slots of its own.
    expect((await openStream(gateway, neighbour.token!, id)).status).toBe(200);

    // A client that goes away frees its slot (once the gateway sees it go).
    await open[0]!.close();
    const reopened = await waitFor(async () => {
      const stream = await openStream(gateway, streamer.token!, id);
      return stream.status === 200 ? stream : undefined;
    }, 'a slot to be free again');
    expect(reopened.status).toBe(200);
    expect((await openStream(gateway, streamer.token!, id)).status).toBe(429);

    // Streams the gateway ends (the conversation ended) free theirs.
    await harness().agent.end(id);
    await Promise.all([open[1]!.ended, open[2]!.ended, reopened.ended]);
    const next = await idleConversation();
    for (let index = 0; index < 3; index++)
      expect((await openStream(gateway, streamer.token!, next)).status).toBe(200);
    expect((await openStream(gateway, streamer.token!, next)).status).toBe(429);
  });

  test("an A2A stream counts towards the same limit as the token's event streams", async () => {
    const gateway = await openGateway([streamer], { maxStreamsPerToken: 1 });
    const id = await idleConversation();
    expect((await openStream(gateway, streamer.token!, id)).status).toBe(200);
    const subscribe = await fetch(`${gateway.url}/a2a`, {
      method: 'POST',
      headers: { authorization: `Bearer ${streamer.token!}`, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: `${id}/m1` } }),
    });
    const body = (await subscribe.json()) as { error?: { message?: string } };
    expect(body.error?.message).toBe(
      'the token streamer has 1 event streams open, the most it may have: close one first',
    );
  });

  test('streams that fail, before or after they open, free their slots', async () => {
    const { agent } = harness();
    // A watch that breaks after the stream has carried an event: the stream ends with an error event.
    const broken = Object.create(agent) as typeof agent;
    broken.watch = async function* () {
      yield { type: 'warning', seq: 1, at: Date.now(), run: 1, message: 'one event' } satisfies AgentEvent;
      throw new Error('the watch broke');
    };
    const gateway = await openGateway([streamer], { agent: broken, maxStreamsPerToken: 2 });
    const id = await idleConversation();
    for (let index = 0; index < 5; index++) {
      const stream = await openStream(gateway, streamer.token!, id);
      expect(stream.status).toBe(200);
      await stream.ended;
      expect(framesOf(stream.text())).toEqual([
        { event: 'warning', data: expect.objectContaining({ message: 'one event' }) },
        { event: 'error', data: { error: 'the watch broke', status: 500 } },
      ]);
    }
    // Refused before streaming (no such conversation): each frees its slot too.
    for (let index = 0; index < 5; index++)
      expect((await openStream(gateway, streamer.token!, `gw-ghost-${randomUUID()}`)).status).toBe(404);
    const both = [
      await openStream(gateway, streamer.token!, id),
      await openStream(gateway, streamer.token!, id),
    ];
    expect(both.map((stream) => stream.status)).toEqual([200, 200]);
  });
});
