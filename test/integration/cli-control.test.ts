import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type CliProcess, assertCliBuilt, runCli, startCli } from '../support/cli-process';
import type { ScriptStep } from '../support/scripted-model';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';
import { type TestHarness, startHarness, waitFor } from '../support/test-worker';
import { echoTool, recordTool, tickerTool } from '../support/test-tools';
import { waitForEvent } from '../support/wait-for-event';
import { killWorkerProcess, spawnWorkerProcess } from '../support/spawn-worker-process';

// The command line against the suite's dev server (TEMPORAL_ADDRESS), each test on its own task queue.

const newId = () => `conv-${randomUUID()}`;
const opened: Array<{ close(): Promise<void> }> = [];
const started: CliProcess[] = [];

beforeAll(assertCliBuilt);
afterEach(async () => {
  for (const process of started.splice(0)) process.kill();
  for (const resource of opened.splice(0).reverse()) await resource.close();
});

function cliEnv(model: ScriptedModelServer, taskQueue: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS,
    AGENT_TASK_QUEUE: taskQueue,
    OPENAI_BASE_URL: model.baseUrl,
    AGENT_MODEL: 'scripted-model',
  };
}

/** A scripted model, a worker with the test tools, and the environment for CLI processes that use them. */
async function setUp(steps: ScriptStep[]): Promise<{
  model: ScriptedModelServer;
  harness: TestHarness;
  env: NodeJS.ProcessEnv;
}> {
  const model = await startScriptedModelServer(steps);
  opened.push(model);
  const harness = await startHarness({ modelBaseUrl: model.baseUrl, tools: [tickerTool, recordTool] });
  opened.push(harness);
  return { model, harness, env: cliEnv(model, harness.taskQueue) };
}

function track(cli: CliProcess): CliProcess {
  started.push(cli);
  return cli;
}

test('run asks for approval; with no terminal it prints the approve command, and a second process approves', async () => {
  const model = await startScriptedModelServer([
    {
      text: 'Writing it.',
      toolCalls: [{ id: 'call_write', name: 'write', arguments: { path: 'out.txt', content: 'approved' } }],
    },
    { text: 'I wrote out.txt.' },
  ]);
  opened.push(model);
  const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-cli-ws-'));
  const env = cliEnv(model, `cli-${randomUUID()}`);
  const id = newId();

  const run = track(startCli(['run', '--id', id, '--workspace', workspace, 'Write out.txt'], env));
  const hint = await run.stderrMatching(/to decide: (durable-agent approve \S+ \S+)/);
  expect(hint[1]).toBe(`durable-agent approve ${id} call_write`);
  expect(await run.stderrMatching(/\? write needs approval \(risk \w+, call call_write\)/)).toBeTruthy();
  await expect(readFile(path.join(workspace, 'out.txt'), 'utf8')).rejects.toThrow();

  const status = await runCli(['status', id], env);
  expect(status.code).toBe(0);
  expect(status.stdout).toContain(`conversation ${id}: running run 1`);
  expect(status.stdout).toMatch(/call_write {2}write \(risk \w+, asked .*\): \{"path":"out\.txt"/);

  const approved = await runCli(['approve', id, 'call_write', '--by', 'ops', '--reason', 'fine by me'], env);
  expect(approved.code).toBe(0);
  expect(approved.stdout).toBe(`allow once: write (call_write) in ${id}\n`);

  const result = await run.done;
  expect(result).toMatchObject({ code: 0, stdout: 'I wrote out.txt.\n' });
  expect(result.stderr).toContain('✓ write allowed once by ops: fine by me');
  expect(result.stderr).toMatch(/✓ write Wrote 8 bytes to out\.txt/);
  expect(await readFile(path.join(workspace, 'out.txt'), 'utf8')).toBe('approved');
}, 120_000);

test('send follows its run to the answer; --no-wait only sends; status and list show the conversation', async () => {
  const { harness, env } = await setUp([{ text: 'Hello from the agent.' }, { text: 'Second answer.' }]);
  const id = newId();

  const sent = await runCli(['send', id, 'Hello'], env);
  expect(sent).toMatchObject({ code: 0, stdout: 'Hello from the agent.\n' });
  expect(sent.stderr).toContain(`started conversation ${id}`);

  const noWait = await runCli(['send', '--no-wait', '--json', id, 'And', 'again'], env);
  expect(noWait.code).toBe(0);
  expect(JSON.parse(noWait.stdout)).toMatchObject({ conversationId: id, started: false });
  const handle = harness.client.workflow.getHandle(id);
  await waitForEvent(handle, 'run_finished', (event) => event.run === 2);

  const status = await runCli(['status', id, '--json'], env);
  expect(status.code).toBe(0);
  expect(JSON.parse(status.stdout)).toMatchObject({
    conversationId: id,
    executionStatus: 'RUNNING',
    taskQueue: harness.taskQueue,
    status: 'idle',
    runCount: 2,
    transcriptLength: 4,
    pendingApprovals: [],
  });

  // Visibility lags a little behind the workflow: wait until it lists the conversation, then ask the CLI.
  await waitFor(async () => {
    for await (const listed of harness.agent.list()) if (listed.conversationId === id) return true;
    return undefined;
  }, 'the conversation in visibility');
  const list = await runCli(['list', '--json'], env);
  expect(list.code).toBe(0);
  const listed = list.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { conversationId: string });
  expect(listed.map((item) => item.conversationId)).toEqual([id]);
  const human = await runCli(['list'], env);
  expect(human.stdout).toMatch(new RegExp(`^${id} {2}started \\d{4}-`));

  // `end` ends it (after its current run), and says so on stdout.
  const ended = await runCli(['end', id, '--reason', 'done'], env);
  expect(ended).toMatchObject({
    code: 0,
    stdout: `${id} ends after its current run and any queued messages\n`,
  });
  expect(await handle.result()).toMatchObject({ endedBy: 'end', runs: 2 });
}, 120_000);

test('approve: refusals say why and change nothing; a rejection reaches the model as blocked', async () => {
  const { model, harness, env } = await setUp([
    { toolCalls: [{ id: 'call_rec', name: 'record', arguments: { value: 'x' } }] },
    { text: 'Not recorded, then.' },
  ]);
  const id = newId();
  await harness.agent.start(id, { approval: { approvers: ['ops'] } });
  const send = track(startCli(['send', id, 'Record x'], env));
  await send.stderrMatching(/to decide: durable-agent approve/);

  const unknownCall = await runCli(['approve', id, 'call_nope', '--by', 'ops'], env);
  expect(unknownCall.code).toBe(1);
  expect(unknownCall.stderr).toContain(
    `conversation ${id} refused approve: no approval is pending for tool call call_nope`,
  );
  const notAnApprover = await runCli(['approve', id, 'call_rec', '--by', 'mallory'], env);
  expect(notAnApprover.code).toBe(1);
  expect(notAnApprover.stderr).toContain('mallory may not approve tool calls in this conversation');
  const pending = await runCli(['status', id, '--json'], env);
  expect(JSON.parse(pending.stdout)).toMatchObject({
    pendingApprovals: [{ toolCallId: 'call_rec', toolName: 'record' }],
  });

  const rejected = await runCli(
    ['approve', id, 'call_rec', '--reject', '--by', 'ops', '--reason', 'not now'],
    env,
  );
  expect(rejected.code).toBe(0);
  expect(rejected.stdout).toContain('reject once: record (call_rec)');
  const result = await send.done;
  expect(result).toMatchObject({ code: 0, stdout: 'Not recorded, then.\n' });
  expect(result.stderr).toContain('✗ record rejected by ops: not now');
  const toolMessage = model.script.requests[1]!.messages.find((message) => message.role === 'tool');
  expect(JSON.parse(toolMessage!.content!)).toMatchObject({ status: 'blocked', tool: 'record' });

  const again = await runCli(['approve', id, 'call_rec', '--by', 'ops'], env);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain('tool call call_rec was already decided');
}, 120_000);

test('an unknown conversation is a clear error; an ended one takes nothing more', async () => {
  const { harness, env } = await setUp([{ text: 'Hi.' }]);
  const missing = newId();
  for (const args of [
    ['status', missing],
    ['approve', missing, 'call_1'],
    ['abort', missing],
    ['watch', missing],
  ]) {
    const result = await runCli(args, env);
    expect({ args, code: result.code }).toEqual({ args, code: 1 });
    expect(result.stderr).toContain(`durable-agent: conversation ${missing} not found`);
  }

  const id = newId();
  expect((await runCli(['send', id, 'Hello'], env)).code).toBe(0);
  await harness.agent.end(id);
  await harness.client.workflow.getHandle(id).result();
  const status = await runCli(['status', id], env);
  expect(status).toMatchObject({ code: 0 });
  expect(status.stdout).toMatch(new RegExp(`conversation ${id}: ended \\(completed at `));
  for (const args of [
    ['send', id, 'More?'],
    ['steer', id, 'More?'],
    ['approve', id, 'call_1'],
    ['watch', id],
  ]) {
    const result = await runCli(args, env);
    expect({ args, code: result.code }).toEqual({ args, code: 1 });
    expect(result.stderr).toContain(`conversation ${id} has ended (completed)`);
  }
}, 120_000);

test('watch shows a running tool’s heartbeated progress, as lines and as JSON events', async () => {
  const { harness, env } = await setUp([
    // Heartbeats reach the server at most once a second: long enough for a few of them.
    { toolCalls: [{ id: 'call_tick', name: 'ticker', arguments: { ticks: 20, everyMs: 150 } }] },
    { text: 'Counted to twenty.' },
  ]);
  const id = await harness.agent.start(undefined, {});
  const human = track(startCli(['watch', id], env));
  const json = track(startCli(['watch', '--json', id], env));
  await human.stderrMatching(/is idle; waiting for its next run/);
  await json.stderrMatching(/is idle; waiting for its next run/);
  await harness.agent.send(id, 'Count to twenty');

  const lines = await human.done;
  expect(lines).toMatchObject({ code: 0, stdout: 'Counted to twenty.\n' });
  expect(lines.stderr).toMatch(/→ ticker \{"ticks":20/);
  expect(lines.stderr).toMatch(/ {2}… ticker tick \d+ \{"ticks":\d+\}/);
  expect(lines.stderr).toMatch(/✓ ticker ticked 20 of 20/);

  const events = (await json.done).stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string; toolName?: string; text?: string; outcome?: string });
  const updates = events.filter((event) => event.type === 'tool_execution_update');
  expect(updates.length).toBeGreaterThan(0);
  expect(updates.every((update) => update.toolName === 'ticker')).toBe(true);
  expect(updates.some((update) => /^tick \d+$/.test(update.text ?? ''))).toBe(true);
  const order = events.map((event) => event.type);
  expect(order.indexOf('tool_execution_start')).toBeLessThan(order.indexOf('tool_execution_update'));
  expect(order.lastIndexOf('tool_execution_update')).toBeLessThan(order.indexOf('tool_execution_end'));
  expect(events[events.length - 1]).toMatchObject({ type: 'run_finished', outcome: 'answered' });
}, 120_000);

test('abort stops the run from another process; the conversation then takes the next message', async () => {
  const { env } = await setUp([
    { toolCalls: [{ id: 'call_tick', name: 'ticker', arguments: { ticks: 600 } }] },
    { text: 'Starting over.' },
  ]);
  const id = newId();
  const send = track(startCli(['send', id, 'Count to 600'], env));
  await send.stderrMatching(/… ticker tick \d/);

  const aborted = await runCli(['abort', id, '--reason', 'enough', '--by', 'ops'], env);
  expect(aborted.code).toBe(0);
  expect(aborted.stderr).toContain(`aborting run 1 of ${id}`);
  const result = await send.done;
  expect(result.code).toBe(1);
  expect(result.stderr).toContain('■ aborted by ops (interrupted 1 tool): enough');
  expect(result.stderr).toMatch(/⊘ ticker \(interrupted\)/);
  expect(result.stderr).toContain('run aborted; the conversation takes the next message');

  const idle = await runCli(['abort', id], env);
  expect(idle.code).toBe(1);
  expect(idle.stderr).toContain(`conversation ${id} refused abort: no run is in progress`);

  expect(await runCli(['send', id, 'Start over'], env)).toMatchObject({
    code: 0,
    stdout: 'Starting over.\n',
  });
}, 120_000);

test('steer interrupts the running tool and follows the run to the answer that takes it into account', async () => {
  const { model, env } = await setUp([
    { toolCalls: [{ id: 'call_tick', name: 'ticker', arguments: { ticks: 600 } }] },
    { text: 'Stopped counting, as you asked.' },
  ]);
  const id = newId();
  const send = track(startCli(['send', id, 'Count to 600'], env));
  await send.stderrMatching(/… ticker tick \d/);

  const steer = await runCli(['steer', id, 'Stop', 'counting'], env);
  expect(steer).toMatchObject({ code: 0, stdout: 'Stopped counting, as you asked.\n' });
  expect(steer.stderr).toContain(`steering the run in progress of ${id}`);
  expect(steer.stderr).toContain('↪ steered (interrupted 1 tool): Stop counting');
  expect(await send.done).toMatchObject({ code: 0, stdout: 'Stopped counting, as you asked.\n' });

  const lastRequest = model.script.requests[1]!.messages;
  expect(lastRequest[lastRequest.length - 1]).toMatchObject({ role: 'user', content: 'Stop counting' });
  const toolResult = lastRequest.find((message) => message.role === 'tool');
  expect(toolResult!.content).toMatch(/ticked \d+ of 600/);
}, 120_000);

test('run says why the conversation failed when the worker refuses it', async () => {
  const model = await startScriptedModelServer([{ text: 'never asked' }]);
  opened.push(model);
  const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-refused-'));
  const elsewhere = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-roots-'));
  const env = { ...cliEnv(model, `refused-${randomUUID()}`), AGENT_WORKSPACE_ROOTS: elsewhere };

  const result = await runCli(['run', '--workspace', workspace, 'Do something'], env);

  expect(result.code).toBe(1);
  expect(result.stderr).toMatch(/failed: .*lies outside the directories this worker serves/);
  expect(model.script.requests).toHaveLength(0);
}, 120_000);

test('send starts a conversation with a token budget; status shows the pause and approve --raise-tokens lets the run go on', async () => {
  const model = await startScriptedModelServer([
    { toolCalls: [{ id: 'call_echo', name: 'echo', arguments: { text: 'once' } }] },
    { text: 'Echoed once.' },
  ]);
  opened.push(model);
  const harness = await startHarness({ modelBaseUrl: model.baseUrl, tools: [echoTool] });
  opened.push(harness);
  const env = cliEnv(model, harness.taskQueue);
  const id = newId();

  const refused = await runCli(['send', id, '--budget-tokens', 'many', 'Echo once'], env);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain('--budget-tokens takes a whole number of at least 1, got many');

  expect((await runCli(['send', id, '--no-wait', '--budget-tokens', '15', 'Echo once'], env)).code).toBe(0);
  // The first model call reports 15 tokens: the budget is spent before the second.
  await waitFor(async () => (await harness.agent.pendingApprovals(id))[0], 'the budget pause');

  const status = await runCli(['status', id], env);
  expect(status.stdout).toContain(
    '  spent 15 tokens, 1 tool call (run 1: 15 tokens, 1 tool call)\n  budget: 15 tokens\n',
  );
  expect(status.stdout).toContain('budget-1  run 1 reached its token budget: 15 of 15 tokens');
  expect(status.stdout).toContain(
    `durable-agent approve ${id} budget-1 [--raise-tokens N] (default: 15 tokens more), or --reject to stop the run`,
  );
  const json = JSON.parse((await runCli(['status', id, '--json'], env)).stdout) as {
    budget: { used: { tokens: number } };
    pendingApprovals: Array<{ toolCallId: string; budget: { kind: string } }>;
  };
  expect(json.budget.used.tokens).toBe(15);
  expect(json.pendingApprovals).toEqual([
    expect.objectContaining({ toolCallId: 'budget-1', budget: expect.objectContaining({ kind: 'tokens' }) }),
  ]);

  const raised = await runCli(['approve', id, 'budget-1', '--raise-tokens', '100', '--by', 'ops'], env);
  expect(raised.code).toBe(0);
  expect(raised.stdout).toBe(`allow once: budget (budget-1) in ${id}\n`);
  const handle = harness.client.workflow.getHandle(id);
  expect(await waitForEvent(handle, 'run_finished')).toMatchObject({
    outcome: 'answered',
    answer: 'Echoed once.',
  });
  expect((await harness.agent.status(id)).budget?.limits).toEqual({ tokens: 115 });

  const history = await runCli(['history', id], env);
  expect(history.code).toBe(0);
  expect(history.stdout).toContain('budget-1');
});

test('status of a running conversation no worker polls for says so at once, with its task queue', async () => {
  const model = await startScriptedModelServer([]);
  opened.push(model);
  const taskQueue = `nobody-${newId()}`;
  const env = cliEnv(model, taskQueue);
  const id = newId();
  expect((await runCli(['send', id, '--no-wait', 'Hello'], env)).code).toBe(0);
  const status = await runCli(['status', id], env);
  expect(status.code).toBe(1);
  expect(status.stderr).toContain(`conversation ${id} is running on task queue ${taskQueue} (since `);
  expect(status.stderr).toContain(
    'but no worker answered for it (no worker polls it): is a worker running on that task queue? (durable-agent worker)',
  );
}, 120_000);

test('status of a conversation whose worker on another machine died a moment ago says at once that none answers, and answers once a worker comes', async () => {
  const model = await startScriptedModelServer([{ text: 'Hello back.' }]);
  opened.push(model);
  const taskQueue = `remote-${newId()}`;
  const env = cliEnv(model, taskQueue);
  const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-cli-ws-'));
  const workerEnv = {
    TASK_QUEUE: taskQueue,
    OPENAI_BASE_URL: model.baseUrl,
    WORKSPACE: workspace,
    MARKER_DIR: workspace,
  };
  // A worker that says it runs on another machine, so no one here can tell that its process has gone.
  const remote = await spawnWorkerProcess({ ...workerEnv, WORKER_IDENTITY: '4242@another-machine' });
  const id = newId();
  expect((await runCli(['send', id, 'Hello'], env)).code).toBe(0);
  await killWorkerProcess(remote);

  const status = track(startCli(['status', id], env));
  // Said while status still waits: the server fails the question only after about 30 s, and the
  // match fails if status exits first.
  const [note] = await status.stderrMatching(
    /no worker has answered for conversation \S+ in \d+ s; still waiting\..*\n/,
  );
  expect(note).toContain(`conversation ${id} in `);
  expect(note).toContain(
    'The worker that had it may have died: the server lists a worker for about a minute',
  );
  expect(note).toMatch(
    new RegExp(`lists 4242@another-machine \\(last poll \\d+ s ago\\) on task queue ${taskQueue}\\.`),
  );

  const next = await spawnWorkerProcess({ ...workerEnv, WORKER_IDENTITY: '4343@a-third-machine' });
  try {
    const answered = await status.done;
    expect(answered.code).toBe(0);
    expect(answered.stdout).toContain(`conversation ${id}: idle`);
  } finally {
    await killWorkerProcess(next);
  }
}, 120_000);

test('watch of a running conversation no worker polls for says so, waits, and follows the run once a worker comes', async () => {
  const model = await startScriptedModelServer([{ text: 'Here now.' }]);
  opened.push(model);
  const taskQueue = `later-${newId()}`;
  const env = cliEnv(model, taskQueue);
  const id = newId();
  expect((await runCli(['send', id, '--no-wait', 'Hello'], env)).code).toBe(0);
  const watch = track(startCli(['watch', id], env));
  await watch.stderrMatching(
    new RegExp(
      `no worker polls task queue ${taskQueue}, where conversation ${id} runs: waiting until one does`,
    ),
  );

  opened.push(await startHarness({ modelBaseUrl: model.baseUrl, taskQueue }));
  const watched = await watch.done;
  expect(watched.code).toBe(0);
  expect(watched.stdout).toContain('Here now.');
}, 120_000);
