import { randomUUID } from 'node:crypto';
import { mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { AgentClient } from '../../src/client/agent-client';
import { MARK_WORKFLOW_TYPE } from '../../src/console/console-marks';
import { signInLink } from '../../src/console/sign-in-link';
import { GatewayTokens } from '../../src/gateway/gateway-tokens';
import { type GatewayDeps, createGateway } from '../../src/http/gateway-app';
import { freePort } from '../../src/platform/free-port';
import { assertCliBuilt, runCli, startCli } from '../support/cli-process';
import { startRecordingProxy } from '../support/recording-proxy';
import { testCertificates } from '../support/test-certificates';

/**
 * The console on gateways with no worker behind them: several replicas and restarts (each replica
 * its own app over the same tokens file and the same Temporal server, as two `gateway` processes
 * are), a TLS proxy in front, and what each route refuses before it reaches a conversation.
 * Sessions and sign-in links need no worker.
 */
const ALICE = { name: 'alice', token: `tok-alice-${randomUUID()}`, actions: ['*'] };
const BOB = { name: 'bob', token: `tok-bob-${randomUUID()}`, actions: ['status'] };
/** May act on conversations, but not read them. */
const DEPUTY = {
  name: 'deputy',
  token: `tok-deputy-${randomUUID()}`,
  actions: ['start', 'steer', 'abort', 'approve'],
};
const LAPSED = {
  name: 'lapsed',
  token: `tok-lapsed-${randomUUID()}`,
  actions: ['*'],
  expiresAt: '2026-01-01T00:00:00Z',
};
const ALL_TOKENS = [ALICE, BOB, DEPUTY, LAPSED];
const dir = mkdtempSync(path.join(os.tmpdir(), 'console-gateways-'));
const TOKEN_FILE = path.join(dir, 'tokens.json');
let written = 0;
let connection: Connection;
let agent: AgentClient;
const apps: FastifyInstance[] = [];

/** A gateway replica listening on loopback, and where. */
interface Replica {
  app: FastifyInstance;
  url: string;
}

/** Rewrites the tokens file as an operator should: a new file moved over the old one. */
function writeTokens(tokens: unknown[]): void {
  const next = path.join(dir, `tokens-${++written}.json`);
  writeFileSync(next, JSON.stringify({ tokens }));
  renameSync(next, TOKEN_FILE);
}

beforeAll(async () => {
  writeTokens(ALL_TOKENS);
  connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  agent = new AgentClient(
    new Client({ connection, namespace: 'default' }),
    `console-replicas-${randomUUID()}`,
  );
});

afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
  await connection?.close();
});

/** A gateway replica (or a restarted one): its own app, reading the tokens file itself. */
async function replica(settings: Partial<GatewayDeps> = {}): Promise<Replica> {
  const app = createGateway({
    agent,
    tokens: GatewayTokens.fromFile(TOKEN_FILE, { lookEveryMs: 0 }),
    ...settings,
  });
  apps.push(app);
  const port = await freePort();
  await app.listen({ port, host: '127.0.0.1' });
  return { app, url: `http://127.0.0.1:${port}` };
}

async function request(at: Pick<Replica, 'url'>, url: string, init: RequestInit = {}) {
  const response = await fetch(`${at.url}${url}`, { redirect: 'manual', ...init });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

/** A sign-in link for a token of the file, as `console-link` makes one: the path and query. */
function link(name: string, expires = Date.now() + 60_000): string {
  const tokens = GatewayTokens.fromFile(TOKEN_FILE);
  const made = new URL(signInLink('http://gateway.test', name, tokens.keyOf(tokens.byName(name)!), expires));
  return `${made.pathname}${made.search}`;
}

/** Signs in through `link` at a replica: the status, and the session cookie as a request header. */
async function signIn(at: Replica, url: string): Promise<{ status: number; cookie: string }> {
  const response = await request(at, url);
  return { status: response.status, cookie: response.headers.get('set-cookie')?.split(';')[0] ?? '' };
}

/** What a live region answers the session: 200 while it lasts, 401 once it has ended. */
async function liveStatus(at: Replica, cookie: string): Promise<number> {
  return (
    await request(at, `/console/live/conversations?prefix=none-${randomUUID()}`, { headers: { cookie } })
  ).status;
}

async function signOut(at: Replica, cookie: string): Promise<number> {
  const page = await request(at, '/console', { headers: { cookie } });
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)![1]!;
  const response = await request(at, '/console/sign-out', {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf }).toString(),
  });
  return response.status;
}

test('a sign-in link used on one replica is refused on another, and on a restarted one', async () => {
  const [a, b] = [await replica(), await replica()];
  const once = link('alice');
  expect((await signIn(a, once)).status).toBe(303);
  expect((await signIn(b, once)).status).toBe(401);
  await a.app.close();
  const restarted = await replica();
  const again = await request(restarted, once);
  expect(again.status).toBe(401);
  expect(again.body).toContain('the sign-in link was used already');
});

test('two replicas given one link at once sign in one person', async () => {
  const [a, b] = [await replica(), await replica()];
  const once = link('alice');
  const statuses = await Promise.all([signIn(a, once), signIn(b, once), signIn(a, once), signIn(b, once)]);
  expect(statuses.map(({ status }) => status).sort()).toEqual([303, 401, 401, 401]);
});

test('a session made on one replica holds on another and after a restart; signing out on one ends it on all', async () => {
  const [a, b] = [await replica(), await replica()];
  const { cookie } = await signIn(a, link('alice'));
  expect(await liveStatus(b, cookie)).toBe(200);
  await a.app.close();
  const restarted = await replica();
  expect(await liveStatus(restarted, cookie)).toBe(200);

  const other = await signIn(b, link('alice'));
  expect(await signOut(restarted, cookie)).toBe(303);
  expect(await liveStatus(b, cookie)).toBe(401);
  expect(await liveStatus(restarted, cookie)).toBe(401);
  expect(await liveStatus(await replica(), cookie)).toBe(401);
  // Another session of the same token goes on.
  expect(await liveStatus(restarted, other.cookie)).toBe(200);
});

test('a token removed from the tokens file ends its sessions on every replica, with no restart', async () => {
  const [a, b] = [await replica(), await replica()];
  const bob = await signIn(a, link('bob'));
  const alice = await signIn(b, link('alice'));
  expect(await liveStatus(b, bob.cookie)).toBe(200);
  writeTokens([ALICE]);
  try {
    expect(await liveStatus(a, bob.cookie)).toBe(401);
    expect(await liveStatus(b, bob.cookie)).toBe(401);
    expect(await liveStatus(a, alice.cookie)).toBe(200);
    // Its token given back with another secret, the old sessions stay ended.
    writeTokens([ALICE, { ...BOB, token: `tok-bob-${randomUUID()}` }]);
    expect(await liveStatus(a, bob.cookie)).toBe(401);
  } finally {
    writeTokens(ALL_TOKENS);
  }
});

test('a used link is a closed workflow the namespace forgets after its retention, which outlasts the link; a link that would outlast it is refused', async () => {
  const app = await replica();
  const expires = Date.now() + 5 * 60_000;
  const once = link('alice', expires);
  expect((await signIn(app, once)).status).toBe(303);
  const nonce = new URL(once, 'http://gateway.test').searchParams.get('nonce')!;
  const mark = await agent.temporal.workflow.getHandle(`durable-agent-console/link/${nonce}`).describe();
  expect(mark.type).toBe(MARK_WORKFLOW_TYPE);
  // Closed at once: the namespace deletes it once its retention has passed, and nothing keeps it longer.
  expect(mark.status.name).toBe('TERMINATED');
  const { config } = await connection.workflowService.describeNamespace({ namespace: 'default' });
  const retentionMs = Number(config!.workflowExecutionRetentionTtl!.seconds) * 1_000;
  expect(expires - Date.now()).toBeLessThan(retentionMs);

  const tooLong = await request(app, link('alice', Date.now() + retentionMs + 60_000));
  expect(tooLong.status).toBe(401);
  expect(tooLong.body).toContain('longer than the Temporal namespace remembers a used one');
});

/** Signs in by pasting alice's token, with `headers`: the status and the Set-Cookie header. */
async function pasteToken(at: Pick<Replica, 'url'>, headers: Record<string, string> = {}) {
  const response = await request(at, '/console/sign-in', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ token: ALICE.token }).toString(),
  });
  return { status: response.status, setCookie: response.headers.get('set-cookie') ?? '' };
}

test('behind a trusted TLS proxy the session cookie is Secure; nobody else makes it so by saying https', async () => {
  const https = { 'x-forwarded-proto': 'https' };
  const behindProxy = await replica({ trustedProxies: ['127.0.0.1'] });
  const secure = await pasteToken(behindProxy, https);
  expect(secure.status).toBe(303);
  expect(secure.setCookie).toMatch(/; Secure/);
  // Plain HTTP through the same proxy: not Secure, or the browser would never send it back.
  expect((await pasteToken(behindProxy, { 'x-forwarded-proto': 'http' })).setCookie).not.toMatch(/Secure/);
  // Signing out clears the cookie as it was set.
  const cookie = secure.setCookie.split(';')[0]!;
  const page = await request(behindProxy, '/console', { headers: { cookie } });
  const out = await request(behindProxy, '/console/sign-out', {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...https },
    body: new URLSearchParams({ csrf: /name="csrf" value="([^"]+)"/.exec(page.body)![1]! }).toString(),
  });
  expect(out.headers.get('set-cookie')).toMatch(/Max-Age=0; Secure/);

  // A gateway told of no proxy, or of another one, believes no one's forwarded protocol.
  for (const direct of [await replica(), await replica({ trustedProxies: ['10.9.8.7'] })]) {
    const signedIn = await pasteToken(direct, https);
    expect(signedIn.status).toBe(303);
    expect(signedIn.setCookie).not.toMatch(/Secure/);
  }
});

test("behind a trusted proxy a form's origin is checked against the host the proxy forwards, and only there", async () => {
  const fromConsole = { origin: 'https://console.example.com', 'x-forwarded-host': 'console.example.com' };
  expect((await pasteToken(await replica({ trustedProxies: ['loopback'] }), fromConsole)).status).toBe(303);
  const elsewhere = { origin: 'https://evil.example', 'x-forwarded-host': 'console.example.com' };
  expect((await pasteToken(await replica({ trustedProxies: ['loopback'] }), elsewhere)).status).toBe(403);
  // Without the proxy setting a forwarded host is nobody's word: the origin must match the Host header.
  expect((await pasteToken(await replica(), fromConsole)).status).toBe(403);
});

test('the gateway command takes its proxy from DURABLE_AGENT_GATEWAY_TRUST_PROXY, and refuses a hop count', async () => {
  assertCliBuilt();
  const env = {
    ...process.env,
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS,
    DURABLE_AGENT_GATEWAY_TOKENS: TOKEN_FILE,
    DURABLE_AGENT_GATEWAY_PORT: '0',
    DURABLE_AGENT_GATEWAY_TRUST_PROXY: 'loopback',
  };
  const refused = await runCli(['gateway', '--trust-proxy', '2'], env);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain('--trust-proxy takes');

  const gateway = startCli(['gateway'], env);
  try {
    const [, url] = await gateway.stderrMatching(/gateway listening on (http:\/\/\S+)/);
    const signedIn = await pasteToken({ url: url! }, { 'x-forwarded-proto': 'https' });
    expect(signedIn.status).toBe(303);
    expect(signedIn.setCookie).toMatch(/; Secure/);
  } finally {
    gateway.kill();
    await gateway.done;
  }
});

/** One request over HTTPS on a connection of its own, trusting `ca` (or only Node's own store when absent). */
function overTls(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; ca?: string },
) {
  return new Promise<{ status: number; setCookie: string; body: string }>((resolve, reject) => {
    const request = https.request(
      url,
      {
        method: init.method ?? 'GET',
        agent: false,
        headers: init.headers ?? {},
        ...(init.ca ? { ca: init.ca } : {}),
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode!,
            setCookie: String(response.headers['set-cookie'] ?? ''),
            body,
          }),
        );
      },
    );
    request.once('error', reject);
    request.end(init.body);
  });
}

test('given --tls-cert and --tls-key, the gateway serves HTTPS: its API and a Secure console cookie, nothing readable on the link, refused by a client that does not trust its CA; a renewed certificate served without a restart', async () => {
  assertCliBuilt();
  const certificates = await testCertificates();
  const certFile = path.join(dir, 'gateway-cert.pem');
  const keyFile = path.join(dir, 'gateway-key.pem');
  writeFileSync(certFile, certificates.cert);
  writeFileSync(keyFile, certificates.key);
  const env = {
    ...process.env,
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS,
    DURABLE_AGENT_GATEWAY_TOKENS: TOKEN_FILE,
    DURABLE_AGENT_GATEWAY_PORT: '0',
  };
  const half = await runCli(['gateway', '--tls-cert', certFile], env);
  expect(half.code).toBe(2);
  expect(half.stderr).toContain('both --tls-cert FILE and --tls-key FILE');
  const strangerKey = path.join(dir, 'stranger-key.pem');
  writeFileSync(strangerKey, (await testCertificates()).key);
  const unpaired = await runCli(['gateway', '--tls-cert', certFile, '--tls-key', strangerKey], env);
  expect(unpaired.code).toBe(2);
  expect(unpaired.stderr).toContain('are not a certificate and its key');

  const gateway = startCli(['gateway', '--tls-cert', certFile, '--tls-key', keyFile], env);
  let port = 0;
  const link = await startRecordingProxy(() => port);
  try {
    const [, url] = await gateway.stderrMatching(/gateway listening on (\S+)/);
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    port = Number(new URL(url!).port);
    // Through a link that records what crosses it, as anyone on the network would see it.
    const viaLink = `https://127.0.0.1:${link.port}`;
    const api = await overTls(`${viaLink}/v1/conversations/nobody-${randomUUID()}`, {
      headers: { authorization: `Bearer ${ALICE.token}` },
      ca: certificates.ca,
    });
    expect(api.status).toBe(404);
    const signedIn = await overTls(`${viaLink}/console/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: ALICE.token }).toString(),
      ca: certificates.ca,
    });
    expect(signedIn.status).toBe(303);
    // Over the gateway's own TLS, with no proxy to vouch for it, the session cookie is Secure.
    expect(signedIn.setCookie).toMatch(/; Secure/);
    const wire = link.recorded();
    expect(wire.length).toBeGreaterThan(0);
    expect(wire.includes(ALICE.token)).toBe(false);
    expect(wire.includes(signedIn.setCookie.split(';')[0]!.replace(/^[^=]*=/, ''))).toBe(false);
    expect(wire.includes('/console/sign-in')).toBe(false);
    // A client that does not trust the gateway's CA is refused by the handshake, before its request.
    await expect(overTls(`${url}/console/sign-in`, { method: 'GET' })).rejects.toThrow(
      /self-signed|issuer|verify/i,
    );

    // Renewed on disk, moved into place file by file: a new certificate beside the old key is not a
    // pair, and the one served before stays; once the key follows, the new one is served, no restart.
    const renewed = await testCertificates();
    const replace = (file: string, text: string) => {
      writeFileSync(`${file}.next`, text);
      renameSync(`${file}.next`, file);
    };
    replace(certFile, renewed.cert);
    await gateway.stderrMatching(/the certificate served before stays/);
    expect((await overTls(`${url}/console/sign-in`, { ca: certificates.ca })).status).toBe(200);
    replace(keyFile, renewed.key);
    for (let tries = 0; ; tries++) {
      const served = await overTls(`${url}/console/sign-in`, { ca: renewed.ca }).catch(() => undefined);
      if (served?.status === 200) break;
      if (tries > 100) throw new Error('the renewed certificate was never served');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await expect(overTls(`${url}/console/sign-in`, { ca: certificates.ca })).rejects.toThrow();
  } finally {
    await link.close();
    gateway.kill();
    await gateway.done;
  }
});

/** The console's page for `id`'s check value, as a signed-in person's form carries it. */
async function csrfFor(at: Replica, cookie: string): Promise<string> {
  const page = await request(at, '/console', { headers: { cookie } });
  return /name="csrf" value="([^"]+)"/.exec(page.body)![1]!;
}

async function postForm(at: Replica, url: string, cookie: string, fields: Record<string, string>) {
  return request(at, url, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
}

test('every console response carries the whole Content-Security-Policy and the other security headers', async () => {
  const at = await replica();
  const { cookie } = await signIn(at, link('alice'));
  const page = await request(at, '/console', { headers: { cookie } });
  const script = /<script src="([^"]+)"/.exec(page.body)![1]!;
  const responses = [
    page,
    await request(at, '/console/sign-in'),
    await request(at, script),
    await request(at, '/console/live/inbox'),
    await request(at, `/console/conversations/c-${randomUUID()}/run?n=x`, { headers: { cookie } }),
  ];
  expect(responses.map((response) => response.status)).toEqual([200, 200, 200, 401, 400]);
  for (const response of responses) {
    const security = Object.fromEntries(
      [...response.headers].filter(([name]) =>
        /^(content-security-policy|x-content-type-options|referrer-policy|x-frame-options|cross-origin-|permissions-policy|strict-transport)/.test(
          name,
        ),
      ),
    );
    expect(security).toEqual({
      'content-security-policy':
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' http: https:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'same-origin',
      'x-frame-options': 'DENY',
      'cross-origin-opener-policy': 'same-origin',
    });
  }
});

test('signing in by token from another site is refused; signing out needs the session check', async () => {
  const at = await replica();
  const crossSite = await pasteToken(at, { origin: 'https://evil.example' });
  expect(crossSite).toMatchObject({ status: 403, setCookie: '' });

  const { cookie } = await signIn(at, link('alice'));
  expect((await postForm(at, '/console/sign-out', cookie, {})).status).toBe(403);
  expect((await postForm(at, '/console/sign-out', cookie, { csrf: 'guessed' })).status).toBe(403);
  expect(await liveStatus(at, cookie)).toBe(200);
  expect((await postForm(at, '/console/sign-out', cookie, { csrf: await csrfFor(at, cookie) })).status).toBe(
    303,
  );
  expect(await liveStatus(at, cookie)).toBe(401);
});

test('the sign-in link of an expired or revoked token is refused', async () => {
  const at = await replica();
  const expired = await request(at, link('lapsed'));
  expect(expired.status).toBe(401);
  expect(expired.headers.get('set-cookie')).toBeNull();
  expect(expired.body).toContain('expired');
  const revoked = link('bob');
  writeTokens([ALICE, DEPUTY, LAPSED]);
  try {
    expect((await request(at, revoked)).status).toBe(401);
  } finally {
    writeTokens(ALL_TOKENS);
  }
});

test('a fork and a change need the session check; a run from inside needs status; steer and abort need their own actions', async () => {
  const at = await replica();
  const id = `c-${randomUUID()}`;
  const alice = await signIn(at, link('alice'));
  const fork = await postForm(at, `/console/conversations/${id}/fork`, alice.cookie, { run: '1' });
  expect(fork.status).toBe(403);
  expect(fork.body).toContain('lacks the console session check');
  const steer = await postForm(at, `/console/conversations/${id}/steer`, alice.cookie, { text: 'stop' });
  expect(steer.status).toBe(403);
  expect(steer.body).toContain('lacks the console session check');

  const deputy = await signIn(at, link('deputy'));
  const run = await request(at, `/console/conversations/${id}/run?n=1`, {
    headers: { cookie: deputy.cookie },
  });
  expect(run.status).toBe(403);
  expect(run.body).toContain('may not status');

  const bob = await signIn(at, link('bob'));
  const csrf = await csrfFor(at, bob.cookie);
  for (const action of ['steer', 'abort']) {
    const refused = await postForm(at, `/console/conversations/${id}/${action}`, bob.cookie, {
      csrf,
      text: 'stop',
    });
    expect({ action, status: refused.status, body: refused.body }).toMatchObject({ action, status: 403 });
    expect(refused.body).toContain(`may not ${action}`);
  }
});
