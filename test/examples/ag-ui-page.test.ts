import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import nock from 'nock';
import { type Browser, chromium } from 'playwright-core';
import { startPageServer } from '../../examples/ag-ui-page/server';
import { GatewayTokens } from '../../src/gateway/gateway-tokens';
import { createGateway } from '../../src/http/gateway-app';
import { freePort } from '../../src/platform/free-port';
import { inCi } from '../support/in-ci';
import { NOCK_MODEL_URL, nockModel } from '../support/nock-model';
import { recordTool, recorded } from '../support/test-tools';
import { type TestHarness, startHarness } from '../support/test-worker';

/**
 * The AG-UI example page in Chromium: the model's text streams into it (as text, whatever markup it
 * holds), a click on Allow decides the approval, and the page's own tool answers from the page.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const chromiumMissing = existsSync(CHROMIUM)
  ? undefined
  : `the AG-UI page test needs Chromium at ${CHROMIUM} (Debian: apt-get install chromium, which .ci/run does; or set CHROMIUM_PATH)`;
if (chromiumMissing && !inCi()) console.warn(`skipped: ${chromiumMissing}`);
const whenBrowser = chromiumMissing && !inCi() ? test.skip : test;

const TOKEN = `tok-page-${randomUUID()}`;
let harness: TestHarness;
let gateway: FastifyInstance;
let pageServer: Awaited<ReturnType<typeof startPageServer>>;
let browser: Browser | undefined;

beforeAll(async () => {
  nock.disableNetConnect();
  nock.enableNetConnect(/127\.0\.0\.1|localhost/);
  harness = await startHarness({ modelBaseUrl: NOCK_MODEL_URL, tools: [recordTool] });
  const port = await freePort();
  gateway = createGateway({
    agent: harness.agent,
    eventPollMs: 50,
    tokens: new GatewayTokens([
      {
        name: 'page-server',
        token: TOKEN,
        actions: ['start', 'send', 'approve', 'events'],
        conversationPrefixes: ['agui-'],
      },
    ]),
  });
  await gateway.listen({ port, host: '127.0.0.1' });
  pageServer = await startPageServer({ gatewayUrl: `http://127.0.0.1:${port}`, token: TOKEN });
});

afterAll(async () => {
  await browser?.close();
  await pageServer?.close();
  await gateway?.close();
  await harness?.close();
  nock.cleanAll();
  nock.enableNetConnect();
});

whenBrowser(
  'in Chromium: the answer streams in as text, Allow decides the approval, the page answers its own tool',
  async () => {
    const hostile = 'Checking <img src=x onerror="window.pwned=1"> first, then recording.';
    const script = nockModel([
      {
        text: hostile,
        textChunks: 8,
        chunkDelayMs: 300,
        toolCalls: [{ id: 'call_browser', name: 'record', arguments: { value: 'from-the-browser' } }],
      },
      { toolCalls: [{ id: 'call_title', name: 'page_title', arguments: {} }] },
      { text: 'Recorded, and your page is titled as it says.' },
    ]);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(pageServer.url);
    await page.fill('#text', 'record a value from the browser');
    await page.click('#ask button');

    // The text shows while it streams: a first part before the whole of it.
    const answer = page.locator('.message.assistant').first();
    await page.waitForFunction(
      "(document.querySelector('.message.assistant')?.textContent ?? '').length > 0",
    );
    const early = (await answer.textContent()) ?? '';
    expect(hostile.startsWith(early)).toBe(true);
    expect(early.length).toBeLessThan(hostile.length);
    await page.waitForSelector('.approval button');
    expect(await answer.textContent()).toBe(hostile);
    // Model text is text: the markup is shown, never made an element, and its handler never ran.
    expect(await page.locator('#messages img').count()).toBe(0);
    expect(await page.evaluate('window.pwned')).toBeUndefined();
    expect(await page.locator('.approval pre').textContent()).toBe('{"value":"from-the-browser"}');
    expect(recorded.has('call_browser')).toBe(false);

    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForFunction(
      "[...document.querySelectorAll('.message.assistant')].some((m) => m.textContent.startsWith('Recorded, and'))",
    );
    expect(recorded.get('call_browser')).toBe('from-the-browser');
    // The page's own tool answered from the page: the model read its title.
    expect(script.requests[2]!.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: 'durable-agent over AG-UI',
    });
    expect(await page.locator('.approval').count()).toBe(0);
    expect(errors).toEqual([]);
  },
  90_000,
);
