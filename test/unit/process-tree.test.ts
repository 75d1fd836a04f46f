import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { BackgroundProcesses } from '../../src/tools/exec/background-processes';
import { childEnvironment } from '../../src/tools/exec/child-environment';
import { createExecTool } from '../../src/tools/exec/exec';
import { CommandPolicy } from '../../src/tools/exec/exec-policy';
import { runMembers } from '../../src/tools/exec/process-tree';
import { Workspace } from '../../src/tools/workspace';
import { makeTempDir, removeDir, resultText, runTool, toolErrorOf } from './tool-harness';

jest.setTimeout(30_000);

/** Processes that left the command's group and session, which a process-group kill never reached. */
const env = childEnvironment(process.env);
let root: string;
let workspace: Workspace;
let processes: BackgroundProcesses;
let execTool: ReturnType<typeof createExecTool>;
const startedPids: number[] = [];

beforeEach(async () => {
  root = await makeTempDir('durable-agent-unit-tree-');
  workspace = new Workspace(root);
  processes = new BackgroundProcesses();
  execTool = createExecTool({ policy: new CommandPolicy(), processes, env });
});

afterEach(async () => {
  processes.killAll();
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
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

async function waitUntilGone(pid: number, withinMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (!isRunning(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return !isRunning(pid);
}

/** The pid a command wrote to `file` in the workspace, waiting for it to appear. */
async function pidFrom(file = 'pid'): Promise<number> {
  for (;;) {
    const text = await readFile(path.join(root, file), 'utf8').catch(() => '');
    if (text.endsWith('\n')) {
      const pid = Number(text.trim());
      expect(Number.isInteger(pid) && pid > 1).toBe(true);
      startedPids.push(pid);
      return pid;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A process in a session of its own, holding the command's output pipes, its pid in `pid`. */
const ESCAPED_SLEEP = `setsid sh -c 'echo $$ > pid; exec sleep 1000'`;

describe('foreground exec', () => {
  test('a setsid process left behind neither holds the result nor outlives the command', async () => {
    const result = await runTool(execTool, workspace, {
      command: 'setsid sleep 1000 & echo $! > pid; echo started',
    });
    expect(resultText(result)).toBe('exit code 0\nstarted\n');
    expect(await waitUntilGone(await pidFrom())).toBe(true);
  });

  test('a grandchild that holds the pipes does not keep the result from coming back', async () => {
    const result = await runTool(execTool, workspace, { command: `(${ESCAPED_SLEEP} &); echo done` });
    expect(resultText(result)).toBe('exit code 0\ndone\n');
    expect(await waitUntilGone(await pidFrom())).toBe(true);
  });

  test('the timeout ends the command and what left its session, with a Timeout error', async () => {
    const error = await toolErrorOf(
      runTool(execTool, workspace, { command: `(${ESCAPED_SLEEP} &) ; sleep 30`, timeout: 1 }),
    );
    expect(error.kind).toBe('Timeout');
    expect(await waitUntilGone(await pidFrom())).toBe(true);
  });

  test('a leftover that ignores SIGTERM is killed after the grace period', async () => {
    const result = await runTool(execTool, workspace, {
      command: `setsid sh -c 'trap "" TERM; echo $$ > pid; while :; do sleep 1; done' & echo left`,
    });
    expect(resultText(result)).toBe('exit code 0\nleft\n');
    expect(await waitUntilGone(await pidFrom())).toBe(true);
  });

  test('a descendant that dropped the mark is still found through its parent', async () => {
    const result = await runTool(execTool, workspace, {
      command: `setsid sh -c 'env -u DURABLE_AGENT_RUN sh -c "echo \\$\\$ > pid; exec sleep 1000"' & echo left`,
    });
    expect(resultText(result)).toBe('exit code 0\nleft\n');
    expect(await waitUntilGone(await pidFrom())).toBe(true);
  });
});

describe('background processes', () => {
  const start = (command: string, timeoutSeconds = 60) =>
    processes.start({
      conversationId: 'c',
      toolCallId: `call_${command}`,
      command,
      cwd: root,
      env,
      timeoutSeconds,
    });

  test('kill reaches a grandchild in a session of its own', async () => {
    const { id } = start(`(${ESCAPED_SLEEP} &); sleep 1000`);
    const pid = await pidFrom();
    const summary = await processes.kill('c', id, 'SIGTERM');
    expect(summary).toMatchObject({ status: 'exited', stoppedBy: 'kill' });
    expect(await waitUntilGone(pid)).toBe(true);
  });

  test('the timeout reaches a grandchild in a session of its own', async () => {
    start(`(${ESCAPED_SLEEP} &); sleep 1000`, 1);
    expect(await waitUntilGone(await pidFrom())).toBe(true);
  });

  test('what a finished background command left running is terminated when it ends', async () => {
    start(`${ESCAPED_SLEEP} & echo started`);
    expect(await waitUntilGone(await pidFrom())).toBe(true);
  });

  test('killAll (the worker exiting) reaches grandchildren that left the session', async () => {
    start(`(${ESCAPED_SLEEP} &); sleep 1000`);
    const pid = await pidFrom();
    processes.killAll();
    expect(await waitUntilGone(pid)).toBe(true);
  });
});

describe('runMembers', () => {
  const info = (pid: number, ppid: number, marked = false, pgid = pid, sid = pid) => ({
    pid,
    ppid,
    pgid,
    sid,
    marked,
  });

  test('marked processes, what they parent, lead or head, and never an unrelated process', () => {
    const members = runMembers([
      info(100, 1, true),
      info(101, 100),
      info(102, 101),
      info(200, 1, false, 100),
      info(201, 1, false, 201, 100),
      info(300, 1),
      info(301, 300),
    ]);
    expect(members.sort()).toEqual([100, 101, 102, 200, 201]);
  });

  test('never this worker, even if something claims it', () => {
    expect(runMembers([info(process.pid, 1, true), info(5, process.pid)])).toEqual([]);
  });
});
