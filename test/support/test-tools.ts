import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { defineTool, textResult } from '../../src/tools/tool';

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** Answers with its text after `delayMs`, reporting progress: for ordering and parallelism. */
export const echoTool = defineTool({
  name: 'echo',
  label: 'Echo',
  description: 'Echo the text back after an optional delay.',
  parameters: z.object({ text: z.string(), delayMs: z.number().int().min(0).default(0) }),
  category: 'other',
  idempotent: true,
  risk: 'low',
  async execute(_id, params, signal, onUpdate) {
    onUpdate({ content: [{ type: 'text', text: `echoing ${params.text}` }] });
    await sleep(params.delayMs, signal);
    return textResult(`echo: ${params.text}`, { text: params.text });
  },
});

/** Never finishes in time and ignores cancellation: only its timeout stops it. */
export const stallTool = defineTool({
  name: 'stall',
  label: 'Stall',
  description: 'Takes far longer than its timeout.',
  parameters: z.object({}),
  category: 'other',
  idempotent: true,
  risk: 'low',
  startToCloseTimeoutMs: 1_000,
  heartbeatTimeoutMs: 5_000,
  retry: { maximumAttempts: 1 },
  async execute() {
    await sleep(10_000);
    return textResult('too late');
  },
});

/** Returns `bytes` bytes of output: for history-size tests. */
export const bulkTool = defineTool({
  name: 'bulk',
  label: 'Bulk output',
  description: 'Returns a block of text of the requested size.',
  parameters: z.object({ bytes: z.number().int().min(1), seed: z.string() }),
  category: 'other',
  idempotent: true,
  risk: 'low',
  async execute(_id, params) {
    return textResult(
      params.seed.repeat(Math.ceil(params.bytes / params.seed.length)).slice(0, params.bytes),
    );
  },
});

/** Calls to `ticker` that saw their abort signal, by tool call id: tests check the tool was told. */
export const tickerAborts = new Set<string>();

/**
 * Ticks every `everyMs`, reporting each tick as progress; when aborted it stops and returns the
 * ticks so far, as a tool that keeps partial work should.
 */
export const tickerTool = defineTool({
  name: 'ticker',
  label: 'Ticker',
  description: 'Counts ticks, reporting progress, until done or interrupted.',
  parameters: z.object({ ticks: z.number().int().min(1), everyMs: z.number().int().min(1).default(100) }),
  category: 'other',
  idempotent: true,
  risk: 'low',
  heartbeatTimeoutMs: 5_000,
  async execute(toolCallId, params, signal, onUpdate) {
    let ticks = 0;
    while (ticks < params.ticks && !signal.aborted) {
      await sleep(params.everyMs, signal).catch(() => undefined);
      if (signal.aborted) break;
      ticks++;
      onUpdate({ content: [{ type: 'text', text: `tick ${ticks}` }], details: { ticks } });
    }
    if (signal.aborted) tickerAborts.add(toolCallId);
    return textResult(`ticked ${ticks} of ${params.ticks}`, { ticks });
  },
});

/** The ticker as a local tool (as `read` is): it runs far past its attempt in the workflow task. */
export const localTickerTool = defineTool({ ...tickerTool, name: 'local_ticker', local: true });

/** Values `record` was called with, by tool call id: tests check whether an approved call really ran. */
export const recorded = new Map<string, string>();

/** A tool with a side effect that asks for approval by default (medium risk). */
export const recordTool = defineTool({
  name: 'record',
  label: 'Record',
  description: 'Records a value.',
  parameters: z.object({ value: z.string() }),
  category: 'other',
  idempotent: false,
  risk: 'medium',
  async execute(toolCallId, params) {
    recorded.set(toolCallId, params.value);
    return textResult(`recorded ${params.value}`);
  },
});

/** Returns `bytes` of random base64, which does not compress: for payload-size tests. */
export const noiseTool = defineTool({
  name: 'noise',
  label: 'Noise',
  description: 'Returns incompressible text of the requested size.',
  parameters: z.object({ bytes: z.number().int().min(1) }),
  category: 'other',
  idempotent: true,
  risk: 'low',
  async execute(_id, params) {
    return textResult(
      randomBytes(Math.ceil((params.bytes * 3) / 4))
        .toString('base64')
        .slice(0, params.bytes),
    );
  },
});
