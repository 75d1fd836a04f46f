import { Context } from '@temporalio/activity';
import { z } from 'zod';
import type { ToolCategory } from '../../src/shared/tool-descriptor';
import { type AgentTool, defineTool, textResult } from '../../src/tools/tool';
import { preciseNow } from './clock';
import type { ToolReport } from './protocol';

/** What a tool reports about itself, for the control-latency bench (times from `preciseNow`). */
export type ToolSignal = Omit<ToolReport, 'type'>;

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * The tools the benches call, all low risk (no approval unless a conversation asks for one):
 * `noop` answers at once, `sleep` waits `ms` (500 by default), `probe` reports when it starts,
 * `wait`, `wait_local`, `wait_file` and `wait_command` report when they start and when they see their
 * abort signal.
 */
export function benchTools(report: (signal: ToolSignal) => void = () => undefined): AgentTool[] {
  const noop = defineTool({
    name: 'noop',
    label: 'No-op',
    description: 'Does nothing and answers ok.',
    parameters: z.object({}),
    category: 'other',
    idempotent: true,
    local: true,
    risk: 'low',
    async execute() {
      return textResult('ok');
    },
  });
  const sleepTool = defineTool({
    name: 'sleep',
    label: 'Sleep',
    description: 'Waits, then answers ok.',
    parameters: z.object({ ms: z.number().int().min(0).max(60_000).default(500) }),
    category: 'other',
    idempotent: true,
    risk: 'low',
    async execute(_id, params, signal) {
      await sleep(params.ms, signal);
      return textResult('ok');
    },
  });
  const probe = defineTool({
    name: 'probe',
    label: 'Probe',
    description: 'Reports that it started, then answers ok.',
    parameters: z.object({}),
    category: 'other',
    idempotent: true,
    risk: 'low',
    async execute(toolCallId) {
      report({ event: 'start', tool: 'probe', toolCallId, at: preciseNow() });
      return textResult('ok');
    },
  });
  /**
   * Waits until cancelled (at most `maxMs`), reporting when it starts and when it is told to stop.
   * `idempotent` tools are tried again when their worker dies; the next attempt answers at once, as
   * a step finishing on the worker that took it over.
   */
  const waitTool = (name: string, category: ToolCategory, maxMs: number, idempotent = true, local = false) =>
    defineTool({
      name,
      label: 'Wait',
      description: `Waits until cancelled (at most ${maxMs / 1_000} s), reporting when it starts and when it is told to stop.`,
      parameters: z.object({}),
      category,
      idempotent,
      local,
      risk: 'low',
      async execute(toolCallId, _params, signal) {
        report({ event: 'start', tool: name, toolCallId, at: preciseNow() });
        if (Context.current().info.attempt > 1) return textResult('resumed');
        signal.addEventListener(
          'abort',
          () => report({ event: 'abort', tool: name, toolCallId, at: preciseNow() }),
          { once: true },
        );
        await sleep(maxMs, signal);
        return textResult(signal.aborted ? 'stopped' : 'waited');
      },
    });
  const wait = waitTool('wait', 'other', 30_000);
  // A local tool (as `read` is) that outlasts its attempt in the workflow task, then runs as an activity.
  const waitLocal = waitTool('wait_local', 'other', 30_000, true, true);
  // With the heartbeat timeouts and retries of a file tool and of a command (which, having side
  // effects, is not tried again: the model is told it was cut off), for the crash-recovery bench.
  const waitFile = waitTool('wait_file', 'files', 25_000);
  const waitCommand = waitTool('wait_command', 'commands', 120_000, false);
  return [noop, sleepTool, probe, wait, waitLocal, waitFile, waitCommand];
}
