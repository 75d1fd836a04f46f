import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { type Browser, type Page, chromium } from 'playwright-core';
import { signInLink } from '../../src/console/sign-in-link';
import { createGateway } from '../../src/http/gateway-app';
import { GatewayTokens } from '../../src/gateway/gateway-tokens';
import { freePort } from '../../src/platform/free-port';
import { assertCliBuilt, runCli } from '../support/cli-process';
import { inCi } from '../support/in-ci';
import type { ChatRequest, ScriptedReply } from '../support/scripted-model';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';
import { ask } from '../support/ask';
import { recordTool, recorded } from '../support/test-tools';
import { type TestHarness, startHarness, waitFor } from '../support/test-worker';

/**
 * The console, as the people who supervise agents use it: signed in with a one-time link, seeing
 * and deciding only what their token may, through pages a hostile model cannot script.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const chromiumMissing = existsSync(CHROMIUM)
  ? undefined
  : `the console's browser tests need Chromium at ${CHROMIUM} (Debian: apt-get install chromium, which .ci/run does; or set CHROMIUM_PATH)`;
if (chromiumMissing && !inCi()) console.warn(`skipped: ${chromiumMissing}`);
const whenBrowser = chromiumMissing && !inCi() ? test.skip : test;
/**
 * Where the browser test's pages are photographed: a temporary directory, so a run leaves the tree
 * as it found it, unless UPDATE_CONSOLE_SCREENSHOTS=1 asks for docs/images, which docs/console.md shows.
 */
const SCREENSHOTS =
  process.env.UPDATE_CONSOLE_SCREENSHOTS === '1'
    ? path.join(__dirname, '..', '..', 'docs', 'images')
    : mkdtempSync(path.join(os.tmpdir(), 'console-screenshots-'));

/** What the model answers once its tool ran, per conversation: by the value the call recorded. */
const answers = new Map<string, string | ScriptedReply>();

/** `record VALUE` asks for the tool (which waits for approval); its result gets the answer kept for VALUE. */
function modelTurn(request: ChatRequest): ScriptedReply {
  const last = request.messages.at(-1)!;
  if (last.role === 'tool') {
    const value = /recorded (\S+)/.exec(last.content ?? '')?.[1] ?? '';
    const answer = answers.get(value) ?? `Recorded ${value}.`;
    return typeof answer === 'string' ? { text: answer } : answer;
  }
  const value = /record (\S+)/.exec(last.content ?? '')?.[1];
  if (!value) return { text: 'Nothing to record.' };
  return { toolCalls: [{ id: `call_${randomUUID().slice(0, 8)}`, name: 'record', arguments: { value } }] };
}

const TOKENS = {
  alice: `tok-alice-${randomUUID()}`,
  ann: `tok-ann-${randomUUID()}`,
  brief: `tok-brief-${randomUUID()}`,
};
let tokens: GatewayTokens;
let harness: TestHarness;
let model: ScriptedModelServer;
let gateway: FastifyInstance;
let gatewayUrl: string;
let browser: Browser | undefined;

beforeAll(async () => {
  model = await startScriptedModelServer(Array.from({ length: 400 }, () => modelTurn));
  // The inbox lists conversations by the status their search attributes keep.
  harness = await startHarness({ modelBaseUrl: model.baseUrl, tools: [recordTool], searchAttributes: true });
  tokens = new GatewayTokens(TOKEN_ENTRIES);
  gateway = createGateway({
    agent: harness.agent,
    tokens,
    webUi: { baseUrl: 'http://127.0.0.1:8233', namespace: 'default' },
    // Each keep-alive of a run stream also asks whether its session was signed out.
    keepAliveMs: 500,
  });
  const port = await freePort();
  gatewayUrl = `http://127.0.0.1:${port}`;
  await gateway.listen({ port, host: '127.0.0.1' });
});

const TOKEN_ENTRIES = [
  { name: 'alice', token: TOKENS.alice, actions: ['*'] },
  { name: 'ann', token: TOKENS.ann, actions: ['status', 'approve', 'steer'], conversationPrefixes: ['a-'] },
  {
    name: 'brief',
    token: TOKENS.brief,
    actions: ['*'],
    expiresAt: new Date(Date.now() + 600_000).toISOString(),
  },
] satisfies ConstructorParameters<typeof GatewayTokens>[0];

afterAll(async () => {
  await browser?.close();
  await gateway?.close();
  await harness?.close();
  await model?.close();
});

/** A conversation whose `record VALUE` call waits for a decision. */
async function waitingConversation(id: string, value: string): Promise<void> {
  await harness.agent.start(id, { approval: { tools: { record: 'always' } } });
  await harness.agent.send(id, `record ${value}`);
  await waitFor(
    async () => ((await harness.agent.pendingApprovals(id)).length ? true : undefined),
    `${id} to wait`,
  );
}

function link(name: string, expires = Date.now() + 60_000): string {
  const token = tokens.byName(name)!;
  return signInLink(gatewayUrl, name, tokens.keyOf(token), expires);
}

/** Signs in with a link; the session cookie as a request header. */
async function signIn(name: string): Promise<{ cookie: string; setCookie: string }> {
  const response = await fetch(link(name), { redirect: 'manual' });
  expect(response.status).toBe(303);
  const setCookie = response.headers.get('set-cookie')!;
  return { cookie: setCookie.split(';')[0]!, setCookie };
}

async function get(path: string, cookie?: string) {
  const response = await fetch(`${gatewayUrl}${path}`, {
    redirect: 'manual',
    headers: cookie ? { cookie } : {},
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

function csrfOf(page: string): string {
  return /name="csrf" value="([^"]+)"/.exec(page)![1]!;
}

async function post(
  path: string,
  cookie: string,
  fields: Record<string, string>,
  headers: Record<string, string> = {},
) {
  const response = await fetch(`${gatewayUrl}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: response.status, text: await response.text(), location: response.headers.get('location') };
}

test('a sign-in link works once, for its token; a forged or expired one is refused; the session cookie is HttpOnly and SameSite=Strict; pages forbid inline script', async () => {
  const once = link('alice');
  const first = await fetch(once, { redirect: 'manual' });
  expect(first.status).toBe(303);
  expect(first.headers.get('location')).toBe('/console/inbox');
  const setCookie = first.headers.get('set-cookie')!;
  expect(setCookie).toMatch(/HttpOnly/);
  expect(setCookie).toMatch(/SameSite=Strict/);
  expect(setCookie).toMatch(/Path=\/console/);
  expect((await fetch(once, { redirect: 'manual' })).status).toBe(401);

  const forged = new URL(link('alice'));
  forged.searchParams.set('name', 'ann');
  expect((await fetch(forged, { redirect: 'manual' })).status).toBe(401);
  expect((await fetch(link('alice', Date.now() - 1_000), { redirect: 'manual' })).status).toBe(401);

  const inbox = await get('/console/inbox', setCookie.split(';')[0]);
  expect(inbox.status).toBe(200);
  const policy = inbox.headers.get('content-security-policy')!;
  expect(policy).toContain("script-src 'self'");
  expect(policy).not.toContain('unsafe-inline');
  expect(policy).toContain("frame-ancestors 'none'");
  expect(inbox.text).not.toMatch(/<script>/);

  // Without a session, a page sends the person to sign in; a live region answers 401.
  expect((await get('/console/inbox')).status).toBe(303);
  expect((await get('/console/live/inbox')).status).toBe(401);
  // Pasting the token signs in too; a wrong one does not.
  const pasted = await fetch(`${gatewayUrl}/console/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: TOKENS.alice }).toString(),
  });
  expect(pasted.status).toBe(303);
  const wrong = await fetch(`${gatewayUrl}/console/sign-in`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: 'not-a-token-at-all' }).toString(),
  });
  expect(wrong.status).toBe(401);
});

test('console-link prints a link, made from the tokens file the gateway reads, that signs in once', async () => {
  assertCliBuilt();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'console-link-'));
  const file = path.join(dir, 'tokens.json');
  await writeFile(file, JSON.stringify({ tokens: TOKEN_ENTRIES }));
  const env = { ...process.env, DURABLE_AGENT_GATEWAY_URL: gatewayUrl, DURABLE_AGENT_GATEWAY_TOKENS: file };
  const made = await runCli(['console-link', '--token-name', 'alice', '--minutes', '5'], env);
  expect(made.code).toBe(0);
  const printed = made.stdout.trim();
  expect(printed.startsWith(`${gatewayUrl}/console/sign-in?`)).toBe(true);
  const signed = await fetch(printed, { redirect: 'manual' });
  expect(signed.status).toBe(303);
  expect(signed.headers.get('set-cookie')).toMatch(/^durable_agent_console=/);
  expect((await fetch(printed, { redirect: 'manual' })).status).toBe(401);
  const unknown = await runCli(['console-link', '--token-name', 'mallory'], env);
  expect(unknown.code).toBe(2);
  expect(unknown.stderr).toContain('has no token named mallory');
});

test('a decision needs the session check and the console own origin; with both it runs the tool', async () => {
  const id = `c-${randomUUID()}`;
  await waitingConversation(id, 'csrf-value');
  const { cookie } = await signIn('alice');
  const page = await get(`/console/conversations/${id}`, cookie);
  expect(page.text).toContain(`href="http://127.0.0.1:8233/namespaces/default/workflows/${id}"`);
  const [approval] = await harness.agent.pendingApprovals(id);
  const decision = { decision: 'allow_once', argumentsSha256: approval!.argumentsSha256 };
  const action = `/console/conversations/${id}/approvals/${approval!.toolCallId}`;

  expect((await post(action, cookie, decision)).status).toBe(403);
  expect((await post(action, cookie, { ...decision, csrf: 'guessed' })).status).toBe(403);
  const crossSite = await post(
    action,
    cookie,
    { ...decision, csrf: csrfOf(page.text) },
    { origin: 'http://evil.example' },
  );
  expect(crossSite.status).toBe(403);
  expect(await harness.agent.pendingApprovals(id)).toHaveLength(1);

  const made = await post(action, cookie, { ...decision, csrf: csrfOf(page.text) }, { origin: gatewayUrl });
  expect(made).toMatchObject({ status: 303, location: `/console/conversations/${id}` });
  await waitFor(
    async () => (recorded.get(approval!.toolCallId) === 'csrf-value' ? true : undefined),
    'the tool to run',
  );
  const state = await harness.agent.state(id);
  expect(state.events.find((event) => event.type === 'approval_decided')).toMatchObject({ by: 'alice' });

  // The list says what the finished run spent: two model calls of 15 tokens, one tool call.
  const spent = await waitFor(async () => {
    const list = await get(`/console?prefix=${encodeURIComponent(id)}`, cookie);
    const row = new RegExp(`<tr data-conversation-id="${id}">([\\s\\S]*?)</tr>`).exec(list.text)?.[1] ?? '';
    const numbers = [...row.matchAll(/<td class="number">\s*([^<]*?)\s*<\/td>/g)].map((cell) => cell[1]);
    return numbers[0] === '1' ? numbers : undefined;
  }, 'the list to show the run');
  expect(spent).toEqual(['1', '30', '1']);
});

test('a token limited to a- never sees or decides b-: inbox, live region, conversation page, decision', async () => {
  const mine = `a-${randomUUID()}`;
  const theirs = `b-${randomUUID()}`;
  await Promise.all([waitingConversation(mine, 'mine'), waitingConversation(theirs, 'theirs')]);
  const { cookie } = await signIn('ann');
  const inbox = await waitFor(async () => {
    const page = await get('/console/inbox', cookie);
    return page.text.includes(mine) ? page : undefined;
  }, 'the a- conversation in the inbox');
  expect(inbox.text).not.toContain(theirs);
  expect((await get('/console/live/inbox', cookie)).text).not.toContain(theirs);
  expect((await get('/console', cookie)).text).not.toContain(theirs);
  expect((await get(`/console/conversations/${theirs}`, cookie)).status).toBe(403);
  expect((await get(`/console/live/conversations/${theirs}`, cookie)).status).toBe(403);
  expect((await get(`/console/live/conversations/${theirs}/run`, cookie)).status).toBe(403);
  const ownStream = await openRunStream(mine, cookie);
  expect(ownStream.status).toBe(200);
  ownStream.close();
  const [approval] = await harness.agent.pendingApprovals(theirs);
  const refused = await post(`/console/conversations/${theirs}/approvals/${approval!.toolCallId}`, cookie, {
    csrf: csrfOf(inbox.text),
    decision: 'allow_once',
    argumentsSha256: approval!.argumentsSha256,
  });
  expect(refused.status).toBe(403);
  expect(await harness.agent.pendingApprovals(theirs)).toHaveLength(1);
  // ann may not end conversations at all, her own included.
  expect(
    (await post(`/console/conversations/${mine}/end`, cookie, { csrf: csrfOf(inbox.text) })).status,
  ).toBe(403);
});

test('a budget pause is raised by the amount the person enters, in its own unit', async () => {
  const id = `c-${randomUUID()}`;
  await harness.agent.start(id, { budget: { toolCalls: 1 }, approval: { tools: { record: 'auto' } } });
  await ask(harness.agent, id, 'record within-budget');
  await harness.agent.send(id, 'record past-budget');
  const pause = await waitFor(
    async () => (await harness.agent.pendingApprovals(id)).find((pending) => pending.budget),
    'the run to pause at its budget',
  );
  const { cookie } = await signIn('alice');
  const page = await get(`/console/conversations/${id}`, cookie);
  // The form offers the conversation's first budget for the part as the amount.
  expect(page.text).toMatch(/name="raiseKind" value="toolCalls"/);
  expect(page.text).toMatch(/name="raise"[^>]*value="1"/);
  const raised = await post(`/console/conversations/${id}/approvals/${pause.toolCallId}`, cookie, {
    csrf: csrfOf(page.text),
    decision: 'allow_once',
    argumentsSha256: pause.argumentsSha256,
    raiseKind: 'toolCalls',
    raise: '3',
  });
  expect(raised.status).toBe(303);
  const status = await waitFor(async () => {
    const now = await harness.agent.status(id);
    return now.status === 'idle' ? now : undefined;
  }, 'the raised run to finish');
  // One used when it paused, raised by 3 (the default would have made it 2).
  expect(status.budget?.limits.toolCalls).toBe(4);
});

test('run N from inside, as history --at shows it, and a fork there that opens as a conversation of its own', async () => {
  const id = `a-${randomUUID()}`;
  await harness.agent.start(id, { approval: { tools: { record: 'auto' } } });
  await ask(harness.agent, id, 'record first-run');
  await ask(harness.agent, id, 'record second-run');
  const { cookie } = await signIn('alice');
  expect((await get(`/console/conversations/${id}`, cookie)).text).toMatch(/name="n"[^>]*value="2"/);
  const run1 = await get(`/console/conversations/${id}/run?n=1`, cookie);
  expect(run1.status).toBe(200);
  // Its model calls: the first was given the message, the second the tool's result too.
  expect(run1.text).toContain('record first-run');
  expect(run1.text).toContain('Recorded first-run.');
  expect(run1.text).not.toContain('second-run');
  expect((await get(`/console/conversations/${id}/run?n=9`, cookie)).status).toBe(400);

  const forked = await post(
    `/console/conversations/${id}/fork`,
    cookie,
    { csrf: csrfOf(run1.text), run: '1' },
    { origin: gatewayUrl },
  );
  expect(forked.status).toBe(303);
  const forkId = decodeURIComponent(forked.location!.slice('/console/conversations/'.length));
  expect(forkId.startsWith(`${id}-fork-`)).toBe(true);
  const carried = JSON.stringify((await harness.agent.transcriptTail(forkId, 50)).messages);
  expect(carried).toContain('record first-run');
  expect(carried).not.toContain('second-run');

  // ann sees a- conversations but may not start one: she may look inside, not fork.
  const ann = await signIn('ann');
  const annRun = await get(`/console/conversations/${id}/run?n=1`, ann.cookie);
  expect(annRun.status).toBe(200);
  const refused = await post(
    `/console/conversations/${id}/fork`,
    ann.cookie,
    { csrf: csrfOf(annRun.text), run: '1' },
    { origin: gatewayUrl },
  );
  expect(refused.status).toBe(403);
});

test('a session ends with its token: once the token is revoked its live region answers 401 and its next action is refused', async () => {
  const id = `c-${randomUUID()}`;
  await waitingConversation(id, 'revoked-value');
  const { cookie } = await signIn('brief');
  const page = await get('/console/inbox', cookie);
  expect(page.status).toBe(200);
  const stream = await openRunStream(id, cookie);
  expect(stream.status).toBe(200);
  tokens.revoke(tokens.byName('brief')!);
  expect((await get('/console/live/inbox', cookie)).status).toBe(401);
  const [approval] = await harness.agent.pendingApprovals(id);
  const refused = await post(`/console/conversations/${id}/approvals/${approval!.toolCallId}`, cookie, {
    csrf: csrfOf(page.text),
    decision: 'allow_once',
    argumentsSha256: approval!.argumentsSha256,
  });
  expect(refused.status).toBe(401);
  expect(await harness.agent.pendingApprovals(id)).toHaveLength(1);
  // The open run stream sends nothing more of the conversation: what happens next ends it with 401.
  await harness.agent.approve(id, {
    toolCallId: approval!.toolCallId,
    decision: 'reject_once',
    by: 'test',
  });
  const ended = await stream.rest();
  expect(ended).toMatch(/event: error\ndata: \{"error":"[^"]*","status":401\}/);
  expect(ended).not.toContain('event: changed');
});

test('signing out ends the session: its pages, and its open run stream, answer 401', async () => {
  const id = `c-${randomUUID()}`;
  await waitingConversation(id, 'signed-out-value');
  const { cookie } = await signIn('alice');
  const page = await get('/console/inbox', cookie);
  const stream = await openRunStream(id, cookie);
  expect(stream.status).toBe(200);
  const out = await post('/console/sign-out', cookie, { csrf: csrfOf(page.text) });
  expect(out).toMatchObject({ status: 303, location: '/console/sign-in' });
  expect((await get('/console/live/inbox', cookie)).status).toBe(401);
  // The stream ends at its next keep-alive; were it never to, the wait is bounded.
  const deadline = setTimeout(() => stream.close(), 30_000);
  try {
    expect(await stream.rest().catch(() => 'the stream went on after the sign-out')).toMatch(
      /event: error\ndata: \{"error":"the session was signed out","status":401\}/,
    );
  } finally {
    clearTimeout(deadline);
  }
});

/** The run stream of a conversation's page, open: its status, the rest of it, or close it. */
async function openRunStream(id: string, cookie: string) {
  const stop = new AbortController();
  const response = await fetch(`${gatewayUrl}/console/live/conversations/${id}/run`, {
    headers: { cookie },
    signal: stop.signal,
  });
  return {
    status: response.status,
    rest: () => response.text(),
    close: () => stop.abort(),
  };
}

async function openBrowser(): Promise<Browser> {
  if (chromiumMissing) throw new Error(chromiumMissing);
  browser ??= await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  return browser;
}

/** A page signed in through a link, collecting dialogs and console messages. */
async function signedInPage(
  name: string,
): Promise<{ page: Page; dialogs: string[]; consoleMessages: string[] }> {
  const context = await (await openBrowser()).newContext();
  const page = await context.newPage();
  const dialogs: string[] = [];
  const consoleMessages: string[] = [];
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on('console', (message) => consoleMessages.push(message.text()));
  await page.goto(link(name));
  await page.waitForURL(/\/console\/inbox$/);
  return { page, dialogs, consoleMessages };
}

whenBrowser(
  'in the browser: a pending approval shows in the open inbox, one click runs the tool and the answer shows; a decision made elsewhere takes an item away',
  async () => {
    const { page } = await signedInPage('alice');
    const id = `c-${randomUUID()}`;
    // Ten parts a second apart: the conversation page, opened once the tool ran, sees it stream.
    const answer = 'The browser approved it, and this answer streams into the page part by part.';
    answers.set('browser-value', { text: answer, textChunks: 10, chunkDelayMs: 1_000 });
    await harness.agent.start(id, { approval: { tools: { record: 'always' } } });
    await harness.agent.send(id, 'record browser-value');
    const asked = await waitFor(
      async () => (await harness.agent.pendingApprovals(id))[0],
      'the approval to be asked',
    );
    const item = page.locator(`section[data-tool-call-id="${asked.toolCallId}"]`);
    // It appears in the open page, without a reload (the live region asks every 500 ms).
    await item.waitFor({ timeout: 10_000 });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'console-inbox.png') });
    // Decided from the inbox, the person is taken back to it.
    const backToInbox = page.waitForRequest(
      (request) => request.isNavigationRequest() && request.url().endsWith('/console/inbox'),
    );
    await item.locator('button[data-decision="allow_once"]').click();
    await backToInbox;
    await waitFor(
      async () => (recorded.get(asked.toolCallId) === 'browser-value' ? true : undefined),
      'the tool to run',
    );
    await page.goto(`${gatewayUrl}/console/conversations/${id}`);
    // The answer streams into the run-in-progress box before the transcript keeps it.
    const streaming = page.locator('#run-live .run-text');
    await streaming.filter({ hasText: /\S/ }).waitFor({ timeout: 10_000 });
    const partial = (await streaming.textContent()) ?? '';
    expect(answer).toContain(partial.split('…').at(-1));
    expect(await page.locator('.transcript').textContent()).not.toContain(answer);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'console-run-in-progress.png') });
    // Once the model's answer is kept, the transcript shows it and the box goes.
    await page.locator('.transcript').getByText(answer).waitFor({ timeout: 20_000 });
    await page.locator('#run-live').waitFor({ state: 'hidden' });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'console-conversation.png'), fullPage: true });

    // Decided with the client library (as the CLI does) while the inbox is open: the item goes.
    const other = `c-${randomUUID()}`;
    await page.goto(`${gatewayUrl}/console/inbox`);
    await waitingConversation(other, 'elsewhere-value');
    const [pending] = await harness.agent.pendingApprovals(other);
    const otherItem = page.locator(`section[data-tool-call-id="${pending!.toolCallId}"]`);
    await otherItem.waitFor({ timeout: 10_000 });
    await harness.agent.approve(other, {
      toolCallId: pending!.toolCallId,
      decision: 'reject_once',
      by: 'cli',
    });
    await otherItem.waitFor({ state: 'detached', timeout: 10_000 });
  },
);

whenBrowser(
  'what a model writes runs no script, loads nothing remote until clicked, and leaves the page usable',
  async () => {
    const hits: string[] = [];
    const imageServer = http.createServer((request, response) => {
      hits.push(request.url ?? '');
      response.writeHead(200, { 'content-type': 'image/gif' }).end();
    });
    await new Promise<void>((resolve) => imageServer.listen(0, '127.0.0.1', resolve));
    const imageUrl = `http://127.0.0.1:${(imageServer.address() as AddressInfo).port}/leak.gif?secret=sk-123`;
    try {
      const hostile = [
        '<script>alert("script")</script>',
        '<img src=x onerror="alert(\'onerror\')">',
        '[click me](javascript:alert("link"))',
        '[data](data:text/html,<script>alert(1)</script>)',
        `![leak](${imageUrl})`,
        '<style>body{display:none}</style><div style="position:fixed;inset:0">cover</div>',
        '<form action="http://evil.example"><button>post</button></form>',
        'x'.repeat(1_000_000),
      ].join('\n\n');
      const id = `c-${randomUUID()}`;
      answers.set('hostile-value', hostile);
      await waitingConversation(id, 'hostile-value');
      const [pending] = await harness.agent.pendingApprovals(id);
      await harness.agent.approve(id, {
        toolCallId: pending!.toolCallId,
        decision: 'allow_once',
        by: 'test',
      });
      await waitFor(
        async () => ((await harness.agent.status(id)).status === 'idle' ? true : undefined),
        'the hostile answer to be recorded',
      );

      const { page, dialogs, consoleMessages } = await signedInPage('alice');
      await page.goto(`${gatewayUrl}/console/conversations/${id}`);
      const load = page.locator('button.remote-image');
      await load.waitFor({ timeout: 10_000 });
      // What would run has had its chance: everything the page loads has loaded or failed, and its
      // live region has been read and rendered again by the page's script.
      await page.waitForLoadState('load');
      await page.locator('#conversation[data-reads]').waitFor({ state: 'attached', timeout: 10_000 });
      expect(dialogs).toEqual([]);
      expect(consoleMessages.filter((text) => !/Content Security Policy/.test(text))).toEqual([]);
      expect(hits).toEqual([]);
      expect(
        await page.locator('a[href^="javascript:"], a[href^="data:"], form[action^="http://evil"]').count(),
      ).toBe(0);
      expect(await page.locator('.transcript script, .transcript style, .transcript [onerror]').count()).toBe(
        0,
      );
      // The page stays usable: its own controls are there and visible.
      await page.locator('form[action$="/steer"] input[name="text"]').waitFor({ state: 'visible' });

      await load.click();
      await waitFor(async () => (hits.length > 0 ? true : undefined), 'the clicked image to load');
      expect(hits[0]).toBe('/leak.gif?secret=sk-123');
    } finally {
      imageServer.close();
    }
  },
);
