import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { methods } from '@agentclientprotocol/sdk';
import { AcpTestClient } from '../support/acp-client';

const EVERYTHING = path.join(
  path.dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist',
  'index.js',
);
import { assertCliBuilt, runCli } from '../support/cli-process';
import type { ScriptStep } from '../support/scripted-model';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';

// `durable-agent acp` as an editor starts it, against the suite's Temporal server, each test on a task queue of its own.

const opened: Array<{ close(): Promise<unknown> }> = [];
const agents: AcpTestClient[] = [];

beforeAll(assertCliBuilt);
afterEach(async () => {
  for (const agent of agents.splice(0)) await agent.kill();
  for (const resource of opened.splice(0).reverse()) await resource.close();
});

async function setUp(steps: ScriptStep[]): Promise<{
  model: ScriptedModelServer;
  env: NodeJS.ProcessEnv;
  workspace: string;
}> {
  const model = await startScriptedModelServer(steps);
  opened.push(model);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS,
    AGENT_TASK_QUEUE: `acp-${randomUUID()}`,
    OPENAI_BASE_URL: model.baseUrl,
    AGENT_MODEL: 'scripted-model',
    AGENT_WORKSPACE_ROOTS: os.tmpdir(),
  };
  const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-acp-'));
  return { model, env, workspace };
}

function startAgent(env: NodeJS.ProcessEnv): AcpTestClient {
  const agent = new AcpTestClient(env);
  agents.push(agent);
  return agent;
}

test('a session outside the directories the worker here may use is refused at once', async () => {
  const { env } = await setUp([]);
  const editor = startAgent(env);
  await editor.initialize();
  await expect(editor.agent.request(methods.agent.session.new, { cwd: '/', mcpServers: [] })).rejects.toThrow(
    /AGENT_WORKSPACE_ROOTS/,
  );
}, 120_000);

test('a prompt streams text, a write arrives as a tool call with its diff, permission is asked and the turn ends', async () => {
  const { env, workspace } = await setUp([
    {
      text: 'I will write the greeting file for you now.',
      textChunks: 4,
      toolCalls: [{ id: 'call_write', name: 'write', arguments: { path: 'hello.txt', content: 'hello\n' } }],
    },
    { text: 'Done: hello.txt holds the greeting.', textChunks: 3 },
  ]);
  const editor = startAgent(env);
  const init = await editor.initialize();
  expect(init.agentCapabilities).toMatchObject({ loadSession: true });
  const session = await editor.agent.request(methods.agent.session.new, { cwd: workspace, mcpServers: [] });
  expect(session.modes?.availableModes.map((mode) => mode.id)).toEqual(['default', 'ask', 'auto']);

  const response = await editor.agent.request(methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: 'text', text: 'Write a greeting to hello.txt' }],
  });

  expect(response.stopReason).toBe('end_turn');
  expect(editor.agentText()).toBe(
    'I will write the greeting file for you now.Done: hello.txt holds the greeting.',
  );
  expect(editor.updatesOf('agent_message_chunk').length).toBeGreaterThan(2);
  const file = path.join(workspace, 'hello.txt');
  expect(editor.updatesOf('tool_call')).toEqual([
    expect.objectContaining({
      toolCallId: 'call_write',
      title: 'Write hello.txt',
      kind: 'edit',
      status: 'pending',
      locations: [{ path: file }],
      content: [{ type: 'diff', path: file, oldText: null, newText: 'hello\n' }],
    }),
  ]);
  expect(editor.permissionRequests).toHaveLength(1);
  expect(editor.permissionRequests[0]!.options.map((option) => option.kind)).toEqual([
    'allow_once',
    'allow_always',
    'reject_once',
    'reject_always',
  ]);
  const statuses = editor
    .updatesOf('tool_call_update')
    .filter((update) => update.toolCallId === 'call_write')
    .map((update) => update.status);
  expect(statuses[0]).toBe('in_progress');
  expect(statuses.at(-1)).toBe('completed');
  expect(await readFile(file, 'utf8')).toBe('hello\n');
  expect(editor.updatesOf('available_commands_update')[0]?.availableCommands.map((c) => c.name)).toContain(
    'compact',
  );
}, 120_000);

test("a run held by its agent's spent day asks the editor with reject options only; a reject ends the turn", async () => {
  const list = (id: string) => ({ toolCalls: [{ id, name: 'list_directory', arguments: {} }] });
  const { env, workspace, model } = await setUp([list('call_list_1'), list('call_list_2')]);
  // The worker's operator gives every agent 20 tokens a day: two calls of 15 spend it. ACP sessions
  // are agent `default`, whose ledger for today lives on the suite's server: no other test holds it.
  const editor = startAgent({ ...env, AGENT_BUDGET_TOKENS_PER_DAY: '20' });
  await editor.initialize();
  const session = await editor.agent.request(methods.agent.session.new, { cwd: workspace, mcpServers: [] });
  const response = await editor.agent.request(methods.agent.session.prompt, {
    sessionId: session.sessionId,
    prompt: [{ type: 'text', text: 'List the directory twice' }],
  });
  expect(response.stopReason).toBe('max_turn_requests');
  expect(model.script.requests).toHaveLength(2);
  expect(editor.permissionRequests).toHaveLength(1);
  expect(editor.permissionRequests[0]!.toolCall.toolCallId).toBe('budget-1');
  expect(editor.permissionRequests[0]!.options.map((option) => option.kind)).toEqual([
    'reject_once',
    'reject_always',
  ]);
  expect(
    editor
      .updatesOf('tool_call_update')
      .filter((update) => update.toolCallId === 'budget-1')
      .at(-1),
  ).toMatchObject({ status: 'failed' });
}, 120_000);

test('a model call tried again is told to an editor that shows notices, as a warning with the error made printable', async () => {
  const overloaded = { status: 503, error: 'over\x1b]0;pwned\x07loaded\u202E' };
  const { env, workspace } = await setUp([overloaded, overloaded, overloaded, { text: 'Back online.' }]);
  const editor = startAgent(env);
  await editor.initialize({ notices: true });
  const { sessionId } = await editor.agent.request(methods.agent.session.new, {
    cwd: workspace,
    mcpServers: [],
  });
  const response = await editor.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: 'text', text: 'Hello?' }],
  });
  expect(response.stopReason).toBe('end_turn');
  expect(editor.agentText()).toBe('Back online.');
  const notices = editor.updatesOf('notice');
  // The last failed attempt is followed by two seconds of backoff: it cannot be missed.
  expect(notices.at(-1)).toMatchObject({
    severity: 'warning',
    title: 'The model call failed; trying again (attempt 4)',
    description: expect.stringContaining('overloaded'),
  });
  for (const notice of notices) {
    for (const unprintable of ['\x1b', '\x07', '\u202E'])
      expect(notice.description).not.toContain(unprintable);
  }
  expect(editor.updatesOf('agent_thought_chunk')).toEqual([]);
}, 120_000);

test('session/cancel aborts the run in progress and the turn ends cancelled', async () => {
  const { env, workspace } = await setUp([
    { toolCalls: [{ id: 'call_sleep', name: 'exec', arguments: { command: 'sleep 60' } }] },
  ]);
  const editor = startAgent(env);
  await editor.initialize();
  const { sessionId } = await editor.agent.request(methods.agent.session.new, {
    cwd: workspace,
    mcpServers: [],
  });
  await editor.agent.request(methods.agent.session.setMode, { sessionId, modeId: 'auto' });

  const turn = editor.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: 'text', text: 'Wait a minute' }],
  });
  await editor.until('the command to start', () =>
    editor
      .updatesOf('tool_call')
      .find((update) => update.toolCallId === 'call_sleep' && update.status === 'in_progress'),
  );
  await editor.agent.notify(methods.agent.session.cancel, { sessionId });

  expect((await turn).stopReason).toBe('cancelled');
  expect(
    editor.updatesOf('tool_call_update').find((update) => update.toolCallId === 'call_sleep')?.status,
  ).toBe('failed');
}, 120_000);

test('a decision made with durable-agent approve while the editor is asked withdraws the request', async () => {
  const { env, workspace } = await setUp([
    {
      toolCalls: [
        { id: 'call_write', name: 'write', arguments: { path: 'out.txt', content: 'from the CLI' } },
      ],
    },
    { text: 'Written.' },
  ]);
  const editor = startAgent(env);
  // Nobody answers in the editor.
  editor.answerPermission = () => new Promise(() => undefined);
  await editor.initialize();
  const { sessionId } = await editor.agent.request(methods.agent.session.new, {
    cwd: workspace,
    mcpServers: [],
  });
  const turn = editor.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: 'text', text: 'Write out.txt' }],
  });
  await editor.until('the permission request', () => editor.permissionRequests[0]);
  const asked = editor.rawMessages.find((message) => message.method === 'session/request_permission')!;

  const approved = await runCli(['approve', sessionId, 'call_write', '--by', 'ops'], env);
  expect(approved.code).toBe(0);

  expect((await turn).stopReason).toBe('end_turn');
  await editor.until('the request to be withdrawn', () =>
    editor.rawMessages.find(
      (message) =>
        message.method === '$/cancel_request' &&
        (message.params as { requestId?: unknown })?.requestId === asked.id,
    ),
  );
  expect(await readFile(path.join(workspace, 'out.txt'), 'utf8')).toBe('from the CLI');
}, 120_000);

test('killed mid-tool, the agent is started again, loads the session and sees the rest of the run and its end', async () => {
  const { env, workspace } = await setUp([
    {
      text: 'Counting slowly.',
      toolCalls: [{ id: 'call_count', name: 'exec', arguments: { command: 'sleep 4; echo counted' } }],
    },
    { text: 'The count is done.' },
  ]);
  const first = startAgent(env);
  await first.initialize();
  const { sessionId } = await first.agent.request(methods.agent.session.new, {
    cwd: workspace,
    mcpServers: [],
  });
  await first.agent.request(methods.agent.session.setMode, { sessionId, modeId: 'auto' });
  void first.agent
    .request(methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'Count' }] })
    .catch(() => undefined);
  await first.until('the command to start', () =>
    first.updatesOf('tool_call').find((update) => update.status === 'in_progress'),
  );
  await first.kill('SIGKILL');

  const second = startAgent(env);
  await second.initialize();
  await second.agent.request(methods.agent.session.load, { sessionId, cwd: workspace, mcpServers: [] });
  // The transcript so far, replayed.
  expect(second.updatesOf('user_message_chunk')[0]).toMatchObject({
    content: { type: 'text', text: 'Count' },
  });
  // The command: still in progress, or already found cut off (a dead worker is found in seconds).
  expect(second.updatesOf('tool_call')).toEqual([
    expect.objectContaining({
      toolCallId: 'call_count',
      kind: 'execute',
      status: expect.stringMatching(/^(in_progress|failed)$/),
    }),
  ]);
  // Then the rest of the run: the command's end, the answer, the end.
  const end = await second.until(
    'the run to end',
    () =>
      second.updatesOf('session_info_update').find((update) => update._meta?.['durable-agent/runFinished']),
    90_000,
  );
  expect(end._meta?.['durable-agent/runFinished']).toMatchObject({
    outcome: 'answered',
    stopReason: 'end_turn',
  });
  // A command is not run twice: the one cut off by the kill is reported to the model (and the editor) as failed.
  expect(
    [...second.updatesOf('tool_call'), ...second.updatesOf('tool_call_update')]
      .filter((update) => update.toolCallId === 'call_count' && update.status)
      .at(-1),
  ).toMatchObject({ status: 'failed' });
  expect(second.agentText()).toContain('The count is done.');
}, 180_000);

test('the session modes are the approval modes, and switching one mid-conversation holds for the next calls', async () => {
  const { env, workspace } = await setUp([
    { toolCalls: [{ id: 'call_one', name: 'write', arguments: { path: 'one.txt', content: '1' } }] },
    { text: 'One written.' },
    { toolCalls: [{ id: 'call_two', name: 'write', arguments: { path: 'two.txt', content: '2' } }] },
    { text: 'Two written.' },
  ]);
  const editor = startAgent(env);
  await editor.initialize();
  const { sessionId } = await editor.agent.request(methods.agent.session.new, {
    cwd: workspace,
    mcpServers: [],
  });
  await editor.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: 'text', text: 'Write one.txt' }],
  });
  expect(editor.permissionRequests.map((request) => request.toolCall.toolCallId)).toEqual(['call_one']);

  await editor.agent.request(methods.agent.session.setMode, { sessionId, modeId: 'auto' });
  const second = await editor.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: 'text', text: 'Write two.txt' }],
  });

  expect(second.stopReason).toBe('end_turn');
  expect(editor.permissionRequests).toHaveLength(1);
  expect(await readFile(path.join(workspace, 'two.txt'), 'utf8')).toBe('2');
  // A new editor loading the session is told the mode it is in.
  const other = startAgent(env);
  await other.initialize();
  const loaded = await other.agent.request(methods.agent.session.load, {
    sessionId,
    cwd: workspace,
    mcpServers: [],
  });
  expect(loaded.modes?.currentModeId).toBe('auto');
}, 120_000);

test('an answer the provider filtered ends the turn as a refusal', async () => {
  const { env, workspace } = await setUp([{ text: 'I cannot', finishReason: 'content_filter' }]);
  const editor = startAgent(env);
  await editor.initialize();
  const { sessionId } = await editor.agent.request(methods.agent.session.new, {
    cwd: workspace,
    mcpServers: [],
  });
  const response = await editor.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: 'text', text: 'Something bad' }],
  });
  expect(response.stopReason).toBe('refusal');
}, 120_000);

test('the MCP servers the editor names are tools of its sessions', async () => {
  const { env, workspace } = await setUp([
    {
      toolCalls: [{ id: 'call_echo', name: 'everything__echo', arguments: { message: 'from the editor' } }],
    },
    { text: 'It echoed.' },
  ]);
  const editor = startAgent(env);
  await editor.initialize();
  const { sessionId } = await editor.agent.request(methods.agent.session.new, {
    cwd: workspace,
    mcpServers: [{ name: 'everything', command: process.execPath, args: [EVERYTHING, 'stdio'], env: [] }],
  });
  const response = await editor.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: 'text', text: 'Echo something' }],
  });

  expect(response.stopReason).toBe('end_turn');
  const ended = editor
    .updatesOf('tool_call_update')
    .filter((update) => update.toolCallId === 'call_echo')
    .at(-1);
  expect(ended).toMatchObject({ status: 'completed' });
  expect(JSON.stringify(ended?.content)).toContain('from the editor');
}, 120_000);

test('an image in a prompt reaches the model with the text', async () => {
  const { model, env, workspace } = await setUp([{ text: 'A red square.' }]);
  const editor = startAgent(env);
  const init = await editor.initialize();
  expect(init.agentCapabilities?.promptCapabilities).toMatchObject({ image: true, embeddedContext: true });
  const { sessionId } = await editor.agent.request(methods.agent.session.new, {
    cwd: workspace,
    mcpServers: [],
  });
  const response = await editor.agent.request(methods.agent.session.prompt, {
    sessionId,
    prompt: [
      { type: 'text', text: 'What is in this picture?' },
      { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
    ],
  });
  expect(response.stopReason).toBe('end_turn');
  const user = model.script.requests[0]!.messages.find((message) => message.role === 'user');
  expect(user?.content).toEqual([
    { type: 'text', text: 'What is in this picture?' },
    { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
  ]);
}, 120_000);
