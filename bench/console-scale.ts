import { randomUUID } from 'node:crypto';
import { AgentClient } from '../src/client/agent-client';
import { signInLink } from '../src/console/sign-in-link';
import { createGateway } from '../src/http/gateway-app';
import { GatewayTokens } from '../src/gateway/gateway-tokens';
import { directiveText } from './support/model-server';
import type { BenchContext } from './support/context';
import { durableStack } from './support/stacks';
import { type Summary, summarize, table } from './support/stats';

/** The tool every waiting conversation asks for; asked always, so each call waits for a person. */
const TOOL = 'noop';
/** Conversations started (and asked to call the tool) at once while filling the inbox. */
const FILL_CONCURRENCY = 20;
/** Samples of each measured request. */
const SAMPLES = 10;

export interface ConsoleScaleResult {
  /** Conversations each waiting with one call for a decision. */
  waiting: number;
  /** Turns of the long conversation whose page is measured. */
  turns: number;
  /** GET /console/inbox, the whole page, the first time and then again. */
  inboxFirstMs: number;
  inboxMs: Summary;
  /** GET /console/live/inbox, what an open inbox asks every 500 ms. */
  inboxRefreshMs: Summary;
  /** GET /console/conversations/ID of the long conversation, the first time and then again. */
  conversationFirstMs: number;
  conversationMs: Summary;
  /** A decision made with the client (as the CLI makes it) to its item gone from the inbox's live region. */
  decidedElsewhereToGoneMs: Summary;
  /** A message sent to its call's item in the live region of an inbox narrowed to the new conversations. */
  askedToShownMs: Summary;
  table: string;
}

/**
 * Bench 13: the console at scale. Fills the inbox with `waiting` conversations each waiting for a
 * decision, and gives one conversation `turns` turns; then times, through the gateway over HTTP as
 * a browser asks, the inbox's first render and its refreshes, the long conversation's page, how
 * soon a decision made elsewhere leaves the inbox and how soon a new call shows in it. The
 * browser's own work (parsing and painting the HTML) is not in these numbers; its script asks again
 * every 500 ms, which a person sees on top of the last two.
 */
export async function consoleScale(context: BenchContext): Promise<ConsoleScaleResult> {
  const waiting = context.quick ? 100 : 1_000;
  const turns = context.quick ? 40 : 200;
  const stack = durableStack(context);
  const taskQueue = `bench-console-${randomUUID()}`;
  const worker = await stack.startWorker(taskQueue, { BENCH_SEARCH_ATTRIBUTES: '1' });
  const agent = new AgentClient(context.durableClient, taskQueue);
  const secret = `bench-console-${randomUUID()}`;
  const tokens = new GatewayTokens([{ name: 'supervisor', token: secret, actions: ['*'] }]);
  const gateway = createGateway({ agent, tokens });
  try {
    const url = await gateway.listen({ port: 0, host: '127.0.0.1' });
    const cookie = await signIn(url, tokens);
    const get = (path: string) => timedGet(url, path, cookie);

    context.log(`  filling the inbox: ${waiting} conversations, each with a call waiting ...`);
    const waitingIds = Array.from({ length: waiting }, (_, index) => `wait-${index}-${randomUUID()}`);
    await inParallel(waitingIds, FILL_CONCURRENCY, (id) => askForTheTool(stack, taskQueue, id));
    await untilWaiting(agent, waiting, 'wait-');
    context.log(`  a conversation of ${turns} turns ...`);
    const longId = `long-${randomUUID()}`;
    for (let turn = 1; turn <= turns; turn++) await oneTurn(agent, longId, turn);

    const inboxFirst = await get('/console/inbox');
    const inbox = await samples(() => get('/console/inbox'));
    const refresh = await samples(() => get('/console/live/inbox'));
    const conversationPath = `/console/conversations/${encodeURIComponent(longId)}`;
    const conversationFirst = await get(conversationPath);
    const conversation = await samples(() => get(conversationPath));
    context.log('  decisions made elsewhere, and new calls ...');
    const gone = await decidedElsewhere(agent, get);
    const shown = await newCallsShown(stack, taskQueue, get);

    const result = {
      waiting,
      turns,
      inboxFirstMs: inboxFirst.ms,
      inboxMs: summarize(inbox),
      inboxRefreshMs: summarize(refresh),
      conversationFirstMs: conversationFirst.ms,
      conversationMs: summarize(conversation),
      decidedElsewhereToGoneMs: summarize(gone),
      askedToShownMs: summarize(shown),
    };
    return { ...result, table: resultTable(result) };
  } finally {
    await gateway.close();
    await worker.stop();
  }
}

function resultTable(result: Omit<ConsoleScaleResult, 'table'>): string {
  const row = (label: string, first: number | string, summary: Summary) => [
    label,
    first,
    summary.median,
    summary.p95,
    summary.max,
  ];
  return table(
    ['', 'first (ms)', 'median (ms)', 'p95 (ms)', 'max (ms)'],
    [
      row(`inbox page, ${result.waiting} waiting`, result.inboxFirstMs, result.inboxMs),
      row('inbox live refresh', '', result.inboxRefreshMs),
      row(`conversation page, ${result.turns} turns`, result.conversationFirstMs, result.conversationMs),
      row('decided with the client -> gone from the inbox', '', result.decidedElsewhereToGoneMs),
      row('model asks -> shown in an inbox narrowed to it', '', result.askedToShownMs),
    ],
  );
}

async function signIn(url: string, tokens: GatewayTokens): Promise<string> {
  const token = tokens.byName('supervisor')!;
  const link = signInLink(url, 'supervisor', tokens.keyOf(token), Date.now() + 60_000);
  const response = await fetch(link, { redirect: 'manual' });
  const cookie = response.headers.get('set-cookie')?.split(';')[0];
  if (response.status !== 303 || !cookie) throw new Error(`sign-in answered ${response.status}`);
  return cookie;
}

async function timedGet(url: string, path: string, cookie: string): Promise<{ ms: number; text: string }> {
  const started = performance.now();
  const response = await fetch(`${url}${path}`, { headers: { cookie } });
  const text = await response.text();
  const ms = Math.round((performance.now() - started) * 10) / 10;
  if (!response.ok) throw new Error(`GET ${path} answered ${response.status}: ${text.slice(0, 200)}`);
  return { ms, text };
}

async function samples(measure: () => Promise<{ ms: number }>): Promise<number[]> {
  const times: number[] = [];
  for (let index = 0; index < SAMPLES; index++) times.push((await measure()).ms);
  return times;
}

/** Starts a conversation whose first message asks for the tool, which then waits for a decision. */
async function askForTheTool(stack: ReturnType<typeof durableStack>, taskQueue: string, id: string) {
  await stack.startConversation(id, taskQueue, { approval: { tools: { [TOOL]: 'always' } } });
  await stack.send(id, { c: id, t: 1, tool: TOOL });
}

/** Waits (at most 10 minutes) until visibility lists `count` conversations of `prefix` as waiting. */
async function untilWaiting(agent: AgentClient, count: number, prefix: string): Promise<void> {
  const deadline = Date.now() + 600_000;
  for (;;) {
    const listed = await agent.overview({ status: 'awaiting_approval', idPrefixes: [prefix], limit: count });
    if (listed.length >= count) return;
    if (Date.now() > deadline) throw new Error(`only ${listed.length} of ${count} conversations wait`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

async function oneTurn(agent: AgentClient, id: string, turn: number): Promise<void> {
  const sent = await agent.send(id, directiveText({ c: id, t: turn }));
  const following = agent.followRun(sent);
  for (;;) {
    const next = await following.next();
    if (next.done) {
      if (next.value.how !== 'finished') throw new Error(`turn ${turn} of ${id} ended ${next.value.how}`);
      return;
    }
  }
}

type TimedGet = (path: string) => Promise<{ ms: number; text: string }>;

/**
 * Decides SAMPLES calls the inbox shows with the client, each timed from the decision's answer to
 * the first live region without its item (asked again at once, so the number is the gateway's and
 * Temporal's part, without the page's 500 ms between asks).
 */
async function decidedElsewhere(agent: AgentClient, get: TimedGet): Promise<number[]> {
  const times: number[] = [];
  for (let index = 0; index < SAMPLES; index++) {
    const region = (await get('/console/live/inbox')).text;
    const shown = /data-tool-call-id="([^"]+)"\s+data-conversation-id="([^"]+)"/.exec(region);
    const [toolCallId, conversationId] = [shown?.[1], shown?.[2]];
    if (!conversationId || !toolCallId) throw new Error('the inbox shows no item to decide');
    await agent.approve(conversationId, { toolCallId, decision: 'reject_once', by: 'bench' });
    const decided = performance.now();
    // Each of these conversations has one call waiting: its item is the conversation's only one.
    const item = `data-conversation-id="${conversationId}"`;
    await until(async () => !(await get('/console/live/inbox')).text.includes(item));
    times.push(Math.round(performance.now() - decided));
  }
  return times;
}

/**
 * Sends SAMPLES new conversations a message that asks for the tool, each timed from the send to
 * its item in the live region of an inbox narrowed to those conversations (visibility's lag included).
 */
async function newCallsShown(
  stack: ReturnType<typeof durableStack>,
  taskQueue: string,
  get: TimedGet,
): Promise<number[]> {
  const times: number[] = [];
  const prefix = `new-${randomUUID().slice(0, 8)}-`;
  for (let index = 0; index < SAMPLES; index++) {
    const id = `${prefix}${index}`;
    const sent = performance.now();
    await askForTheTool(stack, taskQueue, id);
    await until(async () =>
      (await get(`/console/live/inbox?prefix=${encodeURIComponent(prefix)}`)).text.includes(
        `data-conversation-id="${id}"`,
      ),
    );
    times.push(Math.round(performance.now() - sent));
  }
  return times;
}

async function until(done: () => Promise<boolean>, withinMs = 60_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`not within ${withinMs} ms`);
  }
}

async function inParallel<T>(items: readonly T[], width: number, each: (item: T) => Promise<void>) {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await each(items[next++]!);
  };
  await Promise.all(Array.from({ length: width }, lane));
}
