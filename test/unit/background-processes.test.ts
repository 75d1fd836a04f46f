import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { BackgroundProcesses } from '../../src/tools/exec/background-processes';
import { childEnvironment } from '../../src/tools/exec/child-environment';
import { PollableOutput } from '../../src/tools/exec/process-output';
import { createRuntimeTools } from '../../src/tools/exec/runtime-tools';
import type { AgentTool, ToolResult } from '../../src/tools/tool';
import { Workspace } from '../../src/tools/workspace';
import { makeTempDir, removeDir, resultText, toolErrorOf } from './tool-harness';

jest.setTimeout(20_000);

let root: string;
let processes: BackgroundProcesses;

beforeEach(async () => {
  root = await makeTempDir('durable-agent-unit-bg-');
  processes = new BackgroundProcesses();
});

afterEach(async () => {
  processes.killAll();
  await removeDir(root);
});

let calls = 0;
const start = (
  command: string,
  options: { conversationId?: string; timeoutSeconds?: number; toolCallId?: string } = {},
) =>
  processes.start({
    conversationId: options.conversationId ?? 'conv-a',
    toolCallId: options.toolCallId ?? `call_${++calls}`,
    command,
    cwd: root,
    env: childEnvironment(process.env),
    timeoutSeconds: options.timeoutSeconds ?? 60,
  });

/** Polls until the process has ended, collecting its output. */
async function outputUntilExit(
  id: string,
  conversationId = 'conv-a',
): Promise<{ text: string; summary: unknown }> {
  let text = '';
  for (;;) {
    const { summary, output } = await processes.poll(conversationId, id, {
      waitMs: 2_000,
      maxBytes: 1_000_000,
    });
    text += output.text;
    if (summary.status === 'exited' && output.pending === 0 && summary.unreadBytes === 0)
      return { text, summary };
  }
}

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

describe('background processes', () => {
  test('start returns at once; poll returns output since the last poll, then the exit status', async () => {
    const started = start('echo first; sleep 0.5; echo second; exit 3');
    expect(started).toMatchObject({ status: 'running', alreadyStarted: false });
    expect(started.id).toMatch(new RegExp(`^p\\d+-${processes.instance}$`));
    const first = await processes.poll('conv-a', started.id, { waitMs: 5_000, maxBytes: 1_000 });
    expect(first.output.text).toBe('first\n');
    const rest = await outputUntilExit(started.id);
    expect(rest.text).toBe('second\n');
    expect(rest.summary).toMatchObject({ status: 'exited', exitCode: 3, signal: null });
  });

  test('ids count per conversation and carry the table instance', () => {
    expect(start('true').id).toBe(`p1-${processes.instance}`);
    expect(start('true').id).toBe(`p2-${processes.instance}`);
    expect(start('true', { conversationId: 'conv-b' }).id).toBe(`p1-${processes.instance}`);
  });

  test("a conversation cannot see or touch another conversation's process", async () => {
    const mine = start('sleep 30');
    expect(processes.list('conv-b')).toEqual([]);
    for (const attempt of [
      () => processes.poll('conv-b', mine.id, { waitMs: 0, maxBytes: 100 }),
      () => processes.write('conv-b', mine.id, 'x', false),
      () => processes.kill('conv-b', mine.id, 'SIGKILL'),
    ]) {
      const error = await toolErrorOf(attempt());
      expect(error.kind).toBe('FileNotFound');
      expect(error.message).toBe(`no background process ${mine.id} in this conversation (see action "list")`);
    }
    expect(processes.list('conv-a')[0]).toMatchObject({ id: mine.id, status: 'running' });
  });

  test('an id from another worker process says that background processes do not survive it', async () => {
    const otherInstance = processes.instance === 'ffffffff' ? 'eeeeeeee' : 'ffffffff';
    const error = await toolErrorOf(
      processes.poll('conv-a', `p1-${otherInstance}`, { waitMs: 0, maxBytes: 1 }),
    );
    expect(error.message).toContain('was started by another worker process');
  });

  test('write feeds stdin; eof closes it', async () => {
    const cat = start('cat');
    expect(await processes.write('conv-a', cat.id, 'hello\n', false)).toEqual({ bytes: 6, flushed: true });
    await processes.write('conv-a', cat.id, 'bye\n', true);
    const { text, summary } = await outputUntilExit(cat.id);
    expect(text).toBe('hello\nbye\n');
    expect(summary).toMatchObject({ exitCode: 0 });
    const error = await toolErrorOf(processes.write('conv-a', cat.id, 'late', false));
    expect(error.message).toContain('has already exited');
  });

  test('kill stops the whole process group', async () => {
    const started = start('sleep 30 & echo $! > child; wait');
    let child = 0;
    while (!child) {
      child = Number(await readFile(path.join(root, 'child'), 'utf8').catch(() => '0'));
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const summary = await processes.kill('conv-a', started.id, 'SIGTERM');
    expect(summary).toMatchObject({ status: 'exited', stoppedBy: 'kill', signal: 'SIGTERM' });
    expect(isRunning(child)).toBe(false);
  });

  test('a process is killed at its timeout', async () => {
    const started = start('sleep 30', { timeoutSeconds: 0.5 });
    const { summary } = await outputUntilExit(started.id);
    expect(summary).toMatchObject({ status: 'exited', stoppedBy: 'timeout', signal: 'SIGTERM' });
  });

  test('the same tool call starts one process, however often it is run', async () => {
    const first = start('echo ran >> runs; sleep 30', { toolCallId: 'call_same' });
    const second = start('echo ran >> runs; sleep 30', { toolCallId: 'call_same' });
    expect(second).toMatchObject({ id: first.id, alreadyStarted: true });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await readFile(path.join(root, 'runs'), 'utf8')).toBe('ran\n');
    expect(processes.list('conv-a')).toHaveLength(1);
  });

  test('running processes are bounded per conversation and per worker', () => {
    processes = new BackgroundProcesses({ perConversation: 2, perWorker: 3 });
    start('sleep 30');
    start('sleep 30');
    expect(() => start('sleep 30')).toThrow('this conversation already has 2 background processes running');
    start('sleep 30', { conversationId: 'conv-b' });
    expect(() => start('sleep 30', { conversationId: 'conv-c' })).toThrow('this worker already runs 3');
  });

  test('finished processes beyond the kept number are forgotten, oldest first', async () => {
    processes = new BackgroundProcesses({ finishedKept: 2 });
    const ids = [start('true').id];
    await outputUntilExit(ids[0]!);
    for (let n = 0; n < 2; n++) {
      ids.push(start('true').id);
      await outputUntilExit(ids.at(-1)!);
    }
    expect(processes.list('conv-a').map((entry) => entry.id)).toEqual(ids.slice(1));
  });

  test('output is bounded: old output is dropped and the poll says how much', async () => {
    processes = new BackgroundProcesses({ outputBytes: 1_000 });
    const started = start("head -c 5000 /dev/zero | tr '\\0' x");
    while (processes.list('conv-a')[0]!.status !== 'exited')
      await new Promise((resolve) => setTimeout(resolve, 20));
    const { output } = await processes.poll('conv-a', started.id, { waitMs: 0, maxBytes: 10_000 });
    expect(output).toEqual({ text: 'x'.repeat(1_000), dropped: 4_000, pending: 0 });
  });

  test('a poll is capped; the rest comes with the next poll', async () => {
    const started = start("printf 'abcdefghij'");
    while (processes.list('conv-a')[0]!.status !== 'exited')
      await new Promise((resolve) => setTimeout(resolve, 20));
    const first = await processes.poll('conv-a', started.id, { waitMs: 0, maxBytes: 4 });
    expect(first.output).toEqual({ text: 'abcd', dropped: 0, pending: 6 });
    const second = await processes.poll('conv-a', started.id, { waitMs: 0, maxBytes: 100 });
    expect(second.output).toEqual({ text: 'efghij', dropped: 0, pending: 0 });
  });

  test('killAll (the worker stopping) kills every conversation’s processes', async () => {
    const a = start('sleep 30');
    const b = start('sleep 30', { conversationId: 'conv-b' });
    processes.killAll();
    await outputUntilExit(a.id);
    await outputUntilExit(b.id, 'conv-b');
    expect(isRunning(a.pid!)).toBe(false);
    expect(isRunning(b.pid!)).toBe(false);
  });
});

describe('PollableOutput', () => {
  test('never splits a UTF-8 character', () => {
    const output = new PollableOutput(100);
    output.push(Buffer.from('aé€😀'));
    expect(output.read(2)).toEqual({ text: 'a', dropped: 0, pending: 9 });
    expect(output.read(3)).toEqual({ text: 'é', dropped: 0, pending: 7 });
    expect(output.read(100)).toEqual({ text: '€😀', dropped: 0, pending: 0 });
  });

  test('skips a character cut in half by dropped output', () => {
    const output = new PollableOutput(5);
    output.push(Buffer.from('€€')); // 6 bytes: the first byte of the first € is dropped
    expect(output.read(100)).toEqual({ text: '€', dropped: 1, pending: 0 });
  });

  test('tail shows the newest output without consuming it', () => {
    const output = new PollableOutput(100);
    output.push(Buffer.from('hello world'));
    expect(output.tail(5)).toBe('world');
    expect(output.read(100).text).toBe('hello world');
  });
});

describe('exec background and the process tool', () => {
  let exec: AgentTool;
  let processTool: AgentTool;
  let workspace: Workspace;
  beforeEach(() => {
    [exec, processTool] = createRuntimeTools({ processes }) as [AgentTool, AgentTool];
    workspace = new Workspace(root);
  });
  const call = (tool: AgentTool, args: unknown, conversationId = 'conv-a'): Promise<ToolResult> =>
    tool.execute(`call_${++calls}`, tool.parameters.parse(args), new AbortController().signal, () => {}, {
      workspace,
      conversationId,
      agentId: 'default',
    });

  test('exec with background: true returns a process id the process tool can poll, list and kill', async () => {
    const started = await call(exec, { command: 'echo ready; cat', background: true });
    const id = (started.details as { id: string }).id;
    expect(resultText(started)).toContain(`started background process ${id}`);

    const polled = await call(processTool, { action: 'poll', id, wait: 5 });
    expect(resultText(polled)).toMatch(new RegExp(`^${id}: running \\(pid \\d+, \\d+s\\)\\nready\\n$`));
    expect(resultText(await call(processTool, { action: 'poll', id }))).toMatch(/\n\(no new output\)$/);

    expect(resultText(await call(processTool, { action: 'write', id, input: 'ping\n' }))).toBe(
      `wrote 5 bytes to ${id}`,
    );
    expect(resultText(await call(processTool, { action: 'poll', id, wait: 5 }))).toMatch(/\nping\n$/);
    expect(resultText(await call(processTool, { action: 'list' }))).toMatch(
      new RegExp(`^${id}  running \\(pid \\d+, \\d+s\\)  echo ready; cat$`),
    );
    expect(resultText(await call(processTool, { action: 'list' }, 'conv-b'))).toBe(
      'no background processes in this conversation',
    );
    expect(resultText(await call(processTool, { action: 'kill', id }))).toMatch(
      new RegExp(`^${id}: killed by SIGTERM, killed on request after \\d+s$`),
    );
  });

  test('the process tool asks for the id it needs and runs written input past the denylist', async () => {
    expect((await toolErrorOf(call(processTool, { action: 'poll' }))).message).toBe('id required');
    const started = await call(exec, { command: 'cat', background: true });
    const id = (started.details as { id: string }).id;
    const error = await toolErrorOf(call(processTool, { action: 'write', id, input: 'sudo rm -rf /\n' }));
    expect(error.kind).toBe('PermissionDenied');
  });

  test('the background timeout may exceed the foreground limit', () => {
    expect(exec.parameters.safeParse({ command: 'x', timeout: 3_600, background: true }).success).toBe(true);
    expect(exec.parameters.safeParse({ command: 'x', timeout: 3_600 }).success).toBe(false);
  });
});
