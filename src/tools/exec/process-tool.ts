import { z } from 'zod';
import type { BackgroundProcesses, ProcessSummary } from './background-processes';
import { diskStopText } from './disk-watchdog';
import { assertNotDenied } from './exec-policy';
import { defineTool, textResult } from '../tool';
import { ToolError } from '../tool-error';

/** Under the 64 KB result limit, with room for the status lines. */
const POLL_MAX_BYTES = 48 * 1024;
const MAX_WAIT_S = 30;

/**
 * `process`: the conversation's background processes, started by `exec` with `background: true`.
 * It touches nothing else, so it runs without approval; text written to a process's stdin still
 * passes the command denylist, since that process may be a shell.
 */
export function createProcessTool(processes: BackgroundProcesses) {
  return defineTool({
    name: 'process',
    label: 'Background processes',
    description: `Manage the background processes this conversation started with exec (background: true). action "list": those on the worker that takes the call, with their status; "poll": output since the last poll and the exit status (wait up to ${MAX_WAIT_S} s for news with "wait"); "write": send "input" to its stdin ("eof": true closes stdin afterwards); "kill": stop it (SIGTERM by default, SIGKILL if it does not stop). Processes live in the worker that started them (calls naming one by id reach that worker) and are lost when it stops.`,
    parameters: z.object({
      action: z.enum(['list', 'poll', 'write', 'kill']).describe('What to do'),
      id: z.string().optional().describe('The process id exec returned (poll, write, kill)'),
      input: z.string().optional().describe('Text to write to the process stdin (write)'),
      eof: z.boolean().optional().describe('Close stdin after writing (write)'),
      signal: z.enum(['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGKILL']).optional().describe('Signal to send (kill)'),
      wait: z
        .number()
        .min(0)
        .max(MAX_WAIT_S)
        .optional()
        .describe(`Seconds to wait for new output or the exit when there is none yet (poll; default 0)`),
    }),
    verbatimParameters: ['input'],
    workerBound: { idParameter: 'id', workerTag: processes.instance },
    category: 'commands',
    idempotent: false,
    risk: 'low',
    async execute(_toolCallId, params, signal, _onUpdate, { conversationId }) {
      if (params.action === 'list') {
        const all = processes.list(conversationId);
        const text = all.length
          ? all.map((entry) => `${entry.id}  ${statusOf(entry)}  ${entry.command}`).join('\n')
          : 'no background processes in this conversation';
        return textResult(text, { processes: all });
      }
      const id = params.id;
      if (!id) throw new ToolError('InvalidArgs', 'id required');
      switch (params.action) {
        case 'poll': {
          const { summary, output } = await processes.poll(conversationId, id, {
            waitMs: (params.wait ?? 0) * 1_000,
            maxBytes: POLL_MAX_BYTES,
            signal,
          });
          const lines = [`${id}: ${statusOf(summary)}`];
          if (output.dropped)
            lines.push(`[${output.dropped} bytes of earlier output were dropped before this poll]`);
          lines.push(output.text || '(no new output)');
          if (output.pending) lines.push(`[${output.pending} more bytes: poll again]`);
          return textResult(lines.join('\n'), {
            ...summary,
            dropped: output.dropped,
            pending: output.pending,
          });
        }
        case 'write': {
          if (params.input === undefined && !params.eof) throw new ToolError('InvalidArgs', 'input required');
          const input = params.input ?? '';
          assertNotDenied(input);
          const { bytes, flushed } = await processes.write(conversationId, id, input, params.eof ?? false);
          const note = flushed ? '' : ' (not read by the process yet: queued)';
          return textResult(`wrote ${bytes} bytes to ${id}${note}${params.eof ? '; stdin closed' : ''}`, {
            id,
            bytes,
            flushed,
          });
        }
        case 'kill': {
          const summary = await processes.kill(conversationId, id, params.signal ?? 'SIGTERM');
          return textResult(`${id}: ${statusOf(summary)}`, summary);
        }
      }
    },
  });
}

function statusOf(summary: ProcessSummary): string {
  const seconds = Math.round(((summary.endedAt ?? Date.now()) - summary.startedAt) / 1_000);
  if (summary.status === 'running') return `running (pid ${summary.pid}, ${seconds}s)`;
  const how =
    summary.exitCode !== null ? `exited with code ${summary.exitCode}` : `killed by ${summary.signal}`;
  if (summary.diskStop) return `${diskStopText(summary.diskStop)} (${how} after ${seconds}s)`;
  const why =
    summary.stoppedBy === 'timeout'
      ? ', stopped at its timeout'
      : summary.stoppedBy === 'kill'
        ? ', killed on request'
        : '';
  return `${how}${why} after ${seconds}s`;
}
