import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { MAX_TOOL_RESULT_BYTES } from '../../src/shared/constants';
import { BackgroundProcesses } from '../../src/tools/exec/background-processes';
import { childEnvironment } from '../../src/tools/exec/child-environment';
import { createExecTool } from '../../src/tools/exec/exec';
import { CommandPolicy } from '../../src/tools/exec/exec-policy';
import type { ToolUpdate } from '../../src/tools/tool';
import { Workspace } from '../../src/tools/workspace';
import { makeTempDir, removeDir, resultText, runTool, toolErrorOf } from './tool-harness';

jest.setTimeout(15_000);

const execTool = createExecTool({
  policy: new CommandPolicy(),
  processes: new BackgroundProcesses(),
  env: childEnvironment(process.env),
});

let root: string;
let workspace: Workspace;
const startedPids: number[] = [];

beforeEach(async () => {
  root = await makeTempDir('durable-agent-unit-exec-');
  workspace = new Workspace(root);
});

afterEach(async () => {
  // Never leave a stray background process behind, even when an assertion failed.
  for (const pid of startedPids.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone, as it should be.
    }
  }
  await removeDir(root);
});

/** Whether a process still runs; a zombie waiting to be reaped counts as gone. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

async function waitUntilGone(pid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (!isRunning(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return !isRunning(pid);
}

async function backgroundPid(): Promise<number> {
  const pid = Number((await readFile(path.join(root, 'pid'), 'utf8')).trim());
  expect(Number.isInteger(pid) && pid > 0).toBe(true);
  startedPids.push(pid);
  return pid;
}

test('runs in the workspace directory', async () => {
  const result = await runTool(execTool, workspace, { command: 'pwd' });
  expect(resultText(result)).toBe(`exit code 0\n${root}\n`);
  expect(result.details).toMatchObject({ exitCode: 0, signal: null });
});

test('returns combined stdout and stderr with the exit code', async () => {
  const result = await runTool(execTool, workspace, { command: 'echo out; echo err >&2' });
  const text = resultText(result);
  expect(text.startsWith('exit code 0\n')).toBe(true);
  expect(text).toContain('out\n');
  expect(text).toContain('err\n');
});

test('a non-zero exit code is reported, not thrown', async () => {
  const result = await runTool(execTool, workspace, { command: 'echo oops; exit 3' });
  expect(resultText(result)).toBe('exit code 3\noops\n');
  expect(result.details).toMatchObject({ exitCode: 3, outputBytes: 5 });
});

test('a command with no output says so', async () => {
  const result = await runTool(execTool, workspace, { command: 'true' });
  expect(resultText(result)).toBe('exit code 0\n(no output)');
});

test('a command killed by a signal reports the signal', async () => {
  const result = await runTool(execTool, workspace, { command: 'kill -9 $$' });
  expect(resultText(result)).toBe('killed by SIGKILL\n(no output)');
  expect(result.details).toMatchObject({ exitCode: null, signal: 'SIGKILL' });
});

test('bash syntax is available', async () => {
  const result = await runTool(execTool, workspace, { command: 'arr=(a b c); echo "${#arr[@]} ${arr[1]}"' });
  expect(resultText(result)).toBe('exit code 0\n3 b\n');
});

test('a timeout rejects with ToolError Timeout within a few seconds', async () => {
  const started = Date.now();
  const error = await toolErrorOf(
    runTool(execTool, workspace, { command: 'echo before; sleep 30', timeout: 1 }),
  );
  expect(Date.now() - started).toBeLessThan(5_000);
  expect(error.kind).toBe('Timeout');
  expect(error.message).toContain('timed out after 1s');
  expect(error.message).toContain('before');
});

test('a timeout kills the whole process group, background children included', async () => {
  const error = await toolErrorOf(
    runTool(execTool, workspace, { command: 'sleep 30 & echo $! > pid; wait', timeout: 1 }),
  );
  expect(error.kind).toBe('Timeout');
  const pid = await backgroundPid();
  expect(await waitUntilGone(pid, 3_000)).toBe(true);
});

test('aborting the signal kills the process group and returns the output so far', async () => {
  const controller = new AbortController();
  const running = runTool(
    execTool,
    workspace,
    { command: 'echo started; sleep 30 & echo $! > pid; wait' },
    { signal: controller.signal, onUpdate: () => controller.abort(new Error('cancelled by test')) },
  );
  const result = await running;
  expect(resultText(result)).toMatch(/^interrupted and killed\. Output so far:\nstarted\n/);
  expect(result.details).toMatchObject({ interrupted: true });
  const pid = await backgroundPid();
  expect(await waitUntilGone(pid, 3_000)).toBe(true);
});

test('huge output keeps its head and tail and says how much was omitted', async () => {
  const result = await runTool(execTool, workspace, {
    command: "head -c 300000 /dev/zero | tr '\\0' a; echo; echo THE-END",
  });
  const text = resultText(result);
  const total = 300_000 + 1 + 8;
  expect(result.details).toMatchObject({ exitCode: 0, outputBytes: total });
  // What is shown and what is said to be omitted add up to the whole output, and it all fits the
  // model's result limit with room to spare, so the limit never cuts the end.
  const [head, omitted, tail] = /^exit code 0\n(a+)\n…\[(\d+) bytes of output omitted\]…\n(a*\nTHE-END\n)$/
    .exec(text)!
    .slice(1);
  expect(head!.length + Number(omitted) + tail!.length).toBe(total);
  expect(head!.length).toBeGreaterThan(16 * 1024);
  expect(tail!.length).toBeGreaterThan(16 * 1024);
  expect(Buffer.byteLength(text)).toBeLessThanOrEqual(MAX_TOOL_RESULT_BYTES - 1_024);
});

test('output just under the cap is not marked as omitted', async () => {
  const result = await runTool(execTool, workspace, { command: "head -c 60000 /dev/zero | tr '\\0' b" });
  const text = resultText(result);
  expect(text).not.toContain('omitted');
  expect(text).toBe(`exit code 0\n${'b'.repeat(60_000)}`);
});

test('onUpdate reports progress for a command that prints over more than a second', async () => {
  const updates: ToolUpdate[] = [];
  const result = await runTool(
    execTool,
    workspace,
    { command: 'for i in 1 2 3 4; do echo tick$i; sleep 0.5; done' },
    { onUpdate: (update) => updates.push(update) },
  );
  expect(resultText(result)).toBe('exit code 0\ntick1\ntick2\ntick3\ntick4\n');
  expect(updates.length).toBeGreaterThanOrEqual(1);
  const first = updates[0]!;
  expect(first.content?.[0]).toMatchObject({ type: 'text', text: expect.stringContaining('tick1') });
  expect((first.details as { outputBytes: number }).outputBytes).toBeGreaterThan(0);
});

test('no progress is reported while output does not change', async () => {
  const updates: ToolUpdate[] = [];
  await runTool(
    execTool,
    workspace,
    { command: 'sleep 1.5' },
    { onUpdate: (update) => updates.push(update) },
  );
  expect(updates).toEqual([]);
});

test('the schema bounds the timeout', () => {
  expect(execTool.parameters.safeParse({ command: 'true', timeout: 0 }).success).toBe(false);
  expect(execTool.parameters.safeParse({ command: 'true', timeout: 281 }).success).toBe(false);
  expect(execTool.parameters.safeParse({ command: 'true', timeout: 280 }).success).toBe(true);
  expect(execTool.parameters.safeParse({ command: '' }).success).toBe(false);
});

test('a signal aborted before the call never starts the command', async () => {
  const controller = new AbortController();
  controller.abort(new Error('cancelled before start'));
  await expect(
    runTool(execTool, workspace, { command: 'touch started' }, { signal: controller.signal }),
  ).rejects.toThrow('cancelled before start');
  await expect(readFile(path.join(root, 'started'))).rejects.toThrow(/ENOENT/);
});
