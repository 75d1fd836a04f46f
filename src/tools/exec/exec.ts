import { z } from 'zod';
import { ERROR_MESSAGE_BYTES, MAX_TOOL_RESULT_BYTES, RESULT_NOTE_ROOM_BYTES } from '../../shared/constants';
import type { BackgroundProcesses } from './background-processes';
import { diskStopText } from './disk-watchdog';
import { DEFAULT_EXEC_LIMITS, type ExecLimitSettings, runLimitsFor } from './exec-limits';
import type { CommandPolicy } from './exec-policy';
import { HeadTailBuffer } from './output-buffer';
import type { SandboxSettings } from './bubblewrap';
import { type RunLimits, spawnShell } from './shell-process';
import { type ToolResult, type ToolUpdate, defineTool, textResult } from '../tool';
import { ToolError } from '../tool-error';

export const DEFAULT_TIMEOUT_S = 120;
/** Below the commands category's 300 s activity timeout, so the tool reports its own timeout with the output so far. */
const MAX_TIMEOUT_S = 280;
const DEFAULT_BACKGROUND_TIMEOUT_S = 1_800;
const MAX_BACKGROUND_TIMEOUT_S = 86_400;
/** Output kept from each end of a command's output; the result shows as much of it as fits, its end first. */
const OUTPUT_HALF_BYTES = 32 * 1024;
/**
 * The most a result's text may take: the model's result limit less room for the notes the runtime
 * adds after it (an interrupted run's), so the limit never cuts the end of the output.
 */
const RESULT_TEXT_BYTES = MAX_TOOL_RESULT_BYTES - RESULT_NOTE_ROOM_BYTES;
/**
 * The most an error's message may take: error messages are cut at ERROR_MESSAGE_BYTES (see
 * `cleanErrorMessage`), less room for the message's own first line.
 */
const ERROR_TEXT_BYTES = ERROR_MESSAGE_BYTES - 1_024;
const PROGRESS_EVERY_MS = 1_000;

/**
 * `exec` as this worker runs it: its command policy, where background processes are kept, the
 * environment every command starts with (built by `childEnvironment`, never the worker's own), and
 * what bounds every command (`DEFAULT_EXEC_LIMITS` when absent: a cgroup each where one can be made).
 */
export function createExecTool(deps: {
  policy: CommandPolicy;
  processes: BackgroundProcesses;
  env: Readonly<Record<string, string>>;
  limits?: ExecLimitSettings;
}) {
  const limitSettings = deps.limits ?? DEFAULT_EXEC_LIMITS;
  return defineTool({
    name: 'exec',
    label: 'Run command',
    description: `Run a shell command with bash in the workspace directory. Returns the exit code and combined stdout/stderr (long output keeps its beginning and end). Default timeout ${DEFAULT_TIMEOUT_S} s. Processes the command leaves running are killed when it ends.${limitSettings.disk.quotaMb > 0 ? ` A command that consumes more than ${limitSettings.disk.quotaMb} MB of disk is stopped.` : ''} With background: true it returns a process id at once and the command keeps running (killed after timeout, default ${DEFAULT_BACKGROUND_TIMEOUT_S} s); use the process tool to poll its output, write to its stdin or kill it. ${deps.policy.describe()}`,
    parameters: z
      .object({
        command: z.string().min(1).describe('The bash command line to run'),
        timeout: z
          .number()
          .positive()
          .max(MAX_BACKGROUND_TIMEOUT_S)
          .optional()
          .describe(
            `Seconds before the command is killed (default ${DEFAULT_TIMEOUT_S}, at most ${MAX_TIMEOUT_S}; in the background default ${DEFAULT_BACKGROUND_TIMEOUT_S}, at most ${MAX_BACKGROUND_TIMEOUT_S})`,
          ),
        background: z
          .boolean()
          .optional()
          .describe('Start the command and return its process id at once, without waiting for it'),
      })
      .refine(
        (params) => params.background || params.timeout === undefined || params.timeout <= MAX_TIMEOUT_S,
        {
          message: `timeout is at most ${MAX_TIMEOUT_S} seconds unless the command runs in the background`,
          path: ['timeout'],
        },
      ),
    category: 'commands',
    idempotent: false,
    risk: 'high',
    async execute(toolCallId, params, signal, onUpdate, context) {
      if (signal.aborted) throw signal.reason ?? new Error('aborted');
      await deps.policy.check(params.command, context.execSecurity, context.workspace);
      const sandbox = deps.policy.sandboxFor(context.execSecurity);
      const limits = runLimitsFor(limitSettings, sandbox);
      if (params.background) {
        const timeoutSeconds = params.timeout ?? DEFAULT_BACKGROUND_TIMEOUT_S;
        const started = deps.processes.start({
          conversationId: context.conversationId,
          toolCallId,
          command: params.command,
          cwd: context.workspace.root,
          env: deps.env,
          timeoutSeconds,
          limits,
          ...(sandbox ? { sandbox } : {}),
        });
        return textResult(
          `${started.alreadyStarted ? 'already started' : 'started'} background process ${started.id} (pid ${started.pid ?? 'unknown'}); it is killed after ${timeoutSeconds}s. Use the process tool with this id: action "poll" for its output and exit status, "write" for its stdin, "kill" to stop it.`,
          { id: started.id, pid: started.pid, background: true, timeoutSeconds },
        );
      }
      return runInForeground(params.command, (params.timeout ?? DEFAULT_TIMEOUT_S) * 1_000, {
        cwd: context.workspace.root,
        env: deps.env,
        signal,
        onUpdate,
        limits,
        ...(sandbox ? { sandbox } : {}),
      });
    },
  });
}

function runInForeground(
  command: string,
  timeoutMs: number,
  options: {
    cwd: string;
    env: Readonly<Record<string, string>>;
    signal: AbortSignal;
    onUpdate: (update: ToolUpdate) => void;
    limits: RunLimits;
    sandbox?: SandboxSettings;
  },
): Promise<ToolResult> {
  const { signal, onUpdate } = options;
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const run = spawnShell(command, {
      cwd: options.cwd,
      stdin: 'ignore',
      env: options.env,
      limits: options.limits,
      ...(options.sandbox ? { sandbox: options.sandbox } : {}),
    });
    const child = run.child;
    const output = new HeadTailBuffer(OUTPUT_HALF_BYTES);
    child.stdout!.on('data', (chunk: Buffer) => output.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => output.push(chunk));

    let stoppedBy: 'timeout' | 'abort' | undefined;
    const stop = (reason: 'timeout' | 'abort') => {
      if (stoppedBy) return;
      stoppedBy = reason;
      run.terminate();
    };
    const timer = setTimeout(() => stop('timeout'), timeoutMs);
    // A command that exited in time is not reported as timed out while its output drains.
    child.once('exit', () => clearTimeout(timer));
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
    // The run ends at bash's exit (plus a short drain), so a descendant holding the pipes cannot keep it open.
    run.ended.then(
      ({ code, signal: killedBy }) => {
        finish();
        const durationMs = Date.now() - started;
        // The first line says how it ended; the output after it is cut to what the result has room for.
        const withOutput = (first: string, room: number) =>
          `${first}\n${output.toString(room - Buffer.byteLength(first) - 1) || '(no output)'}`;
        const facts = { exitCode: code, signal: killedBy, durationMs, outputBytes: output.bytes };
        if (run.diskStop) {
          // The watchdog's stop comes first: a timeout or abort racing it did not end the command.
          resolve(
            textResult(withOutput(`${diskStopText(run.diskStop)}. Output so far:`, RESULT_TEXT_BYTES), {
              ...facts,
              stoppedBy: 'disk',
              diskStop: run.diskStop,
            }),
          );
          return;
        }
        if (stoppedBy === 'timeout') {
          reject(
            new ToolError(
              'Timeout',
              withOutput(
                `command timed out after ${timeoutMs / 1_000}s and was killed. Output so far:`,
                ERROR_TEXT_BYTES,
              ),
            ),
          );
          return;
        }
        if (stoppedBy === 'abort') {
          // Steering and abort keep what the command printed; the runtime marks the result as partial.
          resolve(
            textResult(withOutput('interrupted and killed. Output so far:', RESULT_TEXT_BYTES), {
              ...facts,
              interrupted: true,
            }),
          );
          return;
        }
        const status = code === null ? `killed by ${killedBy}` : `exit code ${code}`;
        resolve(textResult(withOutput(status, RESULT_TEXT_BYTES), facts));
      },
      (error: Error) => {
        finish();
        reject(new ToolError('ExecutionFailed', `could not start bash: ${error.message}`));
      },
    );
  });
}
