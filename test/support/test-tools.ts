import { z } from 'zod';
import { defineTool, textResult } from '../../src/tools/tool';

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });

/** Answers with its text after `delayMs`, reporting progress: for ordering and parallelism. */
export const echoTool = defineTool({
  name: 'echo',
  label: 'Echo',
  description: 'Echo the text back after an optional delay.',
  parameters: z.object({ text: z.string(), delayMs: z.number().int().min(0).default(0) }),
  category: 'other',
  idempotent: true,
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
  async execute(_id, params) {
    return textResult(
      params.seed.repeat(Math.ceil(params.bytes / params.seed.length)).slice(0, params.bytes),
    );
  },
});
