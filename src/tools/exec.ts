import { spawn } from 'node:child_process';
import { z } from 'zod';
import { HeadTailBuffer } from './output-buffer';
import { defineTool, textResult } from './tool';
import { ToolError } from './tool-error';

const DEFAULT_TIMEOUT_S = 120;
/** Below the commands category's 300 s activity timeout, so the tool reports its own timeout with the output so far. */
const MAX_TIMEOUT_S = 280;
const OUTPUT_HALF_BYTES = 32 * 1024;
const KILL_GRACE_MS = 2_000;
const PROGRESS_EVERY_MS = 1_000;

export const execTool = defineTool({
  name: 'exec',
  label: 'Run command',
  description: `Run a shell command with bash in the workspace directory. Returns the exit code and combined stdout/stderr (long output keeps its beginning and end). Default timeout ${DEFAULT_TIMEOUT_S} s.`,
  parameters: z.object({
    command: z.string().min(1).describe('The bash command line to run'),
    timeout: z
      .number()
      .positive()
      .max(MAX_TIMEOUT_S)
      .optional()
      .describe(
        `Seconds before the command is killed (default ${DEFAULT_TIMEOUT_S}, at most ${MAX_TIMEOUT_S})`,
      ),
  }),
  category: 'commands',
  idempotent: false,
  risk: 'high',
  execute(_toolCallId, params, signal, onUpdate, { workspace }) {
    if (signal.aborted) return Promise.reject(signal.reason ?? new Error('aborted'));
    const timeoutMs = (params.timeout ?? DEFAULT_TIMEOUT_S) * 1_000;
    const started = Date.now();
    return new Promise((resolve, reject) => {
      // Its own process group, so a timeout or cancellation kills everything the command started.
      const child = spawn('bash', ['-c', params.command], {
        cwd: workspace.root,
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const output = new HeadTailBuffer(OUTPUT_HALF_BYTES);
      child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
      child.stderr.on('data', (chunk: Buffer) => output.push(chunk));

      let stoppedBy: 'timeout' | 'abort' | undefined;
      const killGroup = (signalName: NodeJS.Signals) => {
        try {
          process.kill(-child.pid!, signalName);
        } catch {
          // The group is already gone.
        }
      };
      const stop = (reason: 'timeout' | 'abort') => {
        if (stoppedBy) return;
        stoppedBy = reason;
        killGroup('SIGTERM');
        setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS).unref();
      };
      const timer = setTimeout(() => stop('timeout'), timeoutMs);
      const onAbort = () => stop('abort');
      signal.addEventListener('abort', onAbort, { once: true });
      let reported = 0;
      const progress = setInterval(() => {
        if (output.bytes === reported) return;
        reported = output.bytes;
        onUpdate({
          content: [{ type: 'text', text: output.recent(2_000) }],
          details: { outputBytes: output.bytes },
        });
      }, PROGRESS_EVERY_MS);

      const finish = () => {
        clearTimeout(timer);
        clearInterval(progress);
        signal.removeEventListener('abort', onAbort);
      };
      child.on('error', (error) => {
        finish();
        reject(new ToolError('ExecutionFailed', `could not start bash: ${error.message}`));
      });
      child.on('close', (code, killedBy) => {
        finish();
        const durationMs = Date.now() - started;
        const text = output.toString();
        if (stoppedBy === 'timeout') {
          reject(
            new ToolError(
              'Timeout',
              `command timed out after ${timeoutMs / 1_000}s and was killed. Output so far:\n${text}`,
            ),
          );
          return;
        }
        if (stoppedBy === 'abort') {
          // Steering and abort keep what the command printed; the runtime marks the result as partial.
          resolve(
            textResult(`interrupted and killed. Output so far:\n${text || '(no output)'}`, {
              exitCode: code,
              signal: killedBy,
              durationMs,
              outputBytes: output.bytes,
              interrupted: true,
            }),
          );
          return;
        }
        const status = code === null ? `killed by ${killedBy}` : `exit code ${code}`;
        resolve(
          textResult(`${status}\n${text || '(no output)'}`, {
            exitCode: code,
            signal: killedBy,
            durationMs,
            outputBytes: output.bytes,
          }),
        );
      });
    });
  },
});
