import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { assertCliBuilt, runCli, startCli } from '../support/cli-process';
import type { ChatRequest, ScriptedReply } from '../support/scripted-model';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';
import { unclaimedPorts } from '../support/unclaimed-port';

let model: ScriptedModelServer;

afterAll(() => model?.close());

/** The environment a user has: no TEMPORAL_ADDRESS, so the CLI starts and stops its own embedded server. */
async function userEnv(extra: NodeJS.ProcessEnv = {}): Promise<NodeJS.ProcessEnv> {
  const [serverPort, uiPort, codecPort] = await unclaimedPorts(3);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DURABLE_AGENT_DATA_DIR: await mkdtemp(path.join(os.tmpdir(), 'durable-agent-data-')),
    DURABLE_AGENT_SERVER_PORT: String(serverPort),
    DURABLE_AGENT_UI_PORT: String(uiPort),
    DURABLE_AGENT_CODEC_PORT: String(codecPort),
    ...extra,
  };
  delete env.TEMPORAL_ADDRESS;
  return env;
}

beforeAll(assertCliBuilt);

test('durable-agent run answers through an embedded server and resumes the conversation after a restart', async () => {
  model = await startScriptedModelServer([
    {
      text: 'Writing it.',
      toolCalls: [{ name: 'write', arguments: { path: 'greeting.txt', content: 'hello' } }],
    },
    { text: 'I wrote greeting.txt.' },
    (request) => ({
      text: `You have said ${request.messages.filter((m) => m.role === 'user').length} things.`,
    }),
  ]);
  const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-cli-ws-'));
  const env = await userEnv({ OPENAI_BASE_URL: model.baseUrl, AGENT_MODEL: 'scripted-model' });

  // `write` asks for approval by default; --approval auto lets it run.
  const first = await runCli(
    ['run', '--id', 'cli-demo', '--workspace', workspace, '--approval', 'auto', 'Write a greeting'],
    env,
  );
  expect(first.stderr).toContain('Starting the embedded Temporal server');
  expect(first).toMatchObject({ code: 0, stdout: 'I wrote greeting.txt.\n' });
  expect(first.stderr).toMatch(/→ write .*greeting\.txt/);
  expect(first.stderr).toMatch(/✓ write Wrote 5 bytes to greeting\.txt/);
  expect(await readFile(path.join(workspace, 'greeting.txt'), 'utf8')).toBe('hello');

  // A second process: the server is started again from the same SQLite file and the conversation goes on.
  const second = await runCli(['run', '--id', 'cli-demo', '--json', 'How many things have I said?'], env);
  expect(second.code).toBe(0);
  const events = second.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string; answer?: string; run?: number });
  expect(events[0]).toMatchObject({ type: 'run_started', run: 2 });
  expect(events[events.length - 1]).toMatchObject({
    type: 'run_finished',
    answer: 'You have said 2 things.',
  });
  // After a restart the conversation goes on whole: the default system prompt, then every turn.
  expect(model.script.requests[2]!.messages.map((m) => m.role)).toEqual([
    'system',
    'user',
    'assistant',
    'tool',
    'assistant',
    'user',
  ]);
  expect(model.script.exhausted).toBe(false);
}, 180_000);

test('durable-agent run without a model configured says how to configure one and exits non-zero', async () => {
  const env = await userEnv();
  delete env.OPENAI_BASE_URL;
  delete env.OPENAI_API_KEY;
  const result = await runCli(['run', 'hello'], env);
  expect(result.code).toBe(2);
  expect(result.stderr).toContain('No model is configured');
  expect(result.stderr).toContain('OPENAI_BASE_URL');
});

test('durable-agent with a malformed OPENAI_BASE_URL fails at once with a clear message', async () => {
  const result = await runCli(['run', 'hello'], await userEnv({ OPENAI_BASE_URL: 'localhost:1234' }));
  expect(result.code).toBe(1);
  expect(result.stderr).toContain('OPENAI_BASE_URL must be an http(s) URL');
});

test('two runs share one embedded server: the one that started it leaves it running for the other', async () => {
  // Each conversation runs one command, then answers; its first message says how long the command takes.
  const reply = (request: ChatRequest): ScriptedReply => {
    const prompt = request.messages.find((m) => m.role === 'user')!.content as string;
    const last = request.messages[request.messages.length - 1]!;
    if (last.role === 'tool') {
      const ok = (last.content as string).startsWith('exit code 0');
      return { text: ok ? `${prompt} done.` : `${prompt} failed: ${last.content as string}` };
    }
    // The second outlasts the first by far, so it still polls when the first ends, also on a loaded machine.
    const seconds = prompt === 'first' ? 10 : 20;
    return { toolCalls: [{ name: 'exec', arguments: { command: `sleep ${seconds}` } }] };
  };
  const shared = await startScriptedModelServer([reply, reply, reply, reply]);
  const env = await userEnv({ OPENAI_BASE_URL: shared.baseUrl, AGENT_MODEL: 'scripted-model' });
  let serverPid: number | undefined;
  try {
    const first = startCli(['run', '--approval', 'auto', 'first'], env);
    await first.stderrMatching(/conversation /);
    const second = runCli(['run', '--approval', 'auto', 'second'], env);

    const firstResult = await first.done;
    expect(firstResult).toMatchObject({ code: 0, stdout: 'first done.\n' });
    const left = /leaving it running \(pid (\d+)\)/.exec(firstResult.stderr);
    expect(left).not.toBeNull();
    serverPid = Number(left![1]);

    const secondResult = await second;
    expect(secondResult).toMatchObject({ code: 0, stdout: 'second done.\n' });
    expect(secondResult.stderr).not.toContain('Starting the embedded Temporal server');
    expect(secondResult.stderr).toContain('✓ exec exit code 0');
  } finally {
    if (serverPid) process.kill(serverPid, 'SIGTERM');
    await shared.close();
  }
}, 180_000);

test('durable-agent run refuses a malformed flag value with usage, before touching any server', async () => {
  const result = await runCli(
    ['run', '--max-tool-iterations', 'many', 'hello'],
    await userEnv({ OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' }),
  );
  expect(result.code).toBe(2);
  expect(result.stderr).toContain('--max-tool-iterations takes a whole number of at least 1, got many');
  expect(result.stderr).toContain('Usage:');
  expect(result.stderr).not.toContain('Starting the embedded Temporal server');
});

test('commands that act on conversations need a running server and never start one', async () => {
  const env = await userEnv();
  const result = await runCli(['status', 'conv-1'], env);
  expect(result.code).toBe(1);
  expect(result.stderr).toContain(`no Temporal server on 127.0.0.1:${env.DURABLE_AGENT_SERVER_PORT}`);
  expect(result.stderr).not.toContain('Starting the embedded Temporal server');
});

test('help on every command and --help anywhere, --version, and the nearest command for a mistyped one', async () => {
  const env = { ...process.env, NO_COLOR: '1' };
  const help = await runCli(['help'], env);
  expect(help).toMatchObject({ code: 0, stderr: '' });
  for (const command of ['run', 'send', 'watch', 'status', 'worker', 'codec-server']) {
    expect(help.stdout).toMatch(new RegExp(`^  ${command} +\\S`, 'm'));
  }
  expect(help.stdout).toContain('OTEL_EXPORTER_OTLP_ENDPOINT');

  const anywhere = await runCli(['send', 'conv-1', 'some text', '--help'], env);
  expect(anywhere).toMatchObject({ code: 0, stderr: '' });
  expect(anywhere.stdout).toMatch(/^send a message to a conversation/);
  expect(anywhere.stdout).toContain('durable-agent send ID [--no-wait] [--json]');
  expect((await runCli(['help', 'status'], env)).stdout).toContain('durable-agent status ID [--json]');

  const version = await runCli(['--version'], env);
  expect(version).toMatchObject({ code: 0, stdout: expect.stringMatching(/^\d+\.\d+\.\d+\n$/) });

  const typo = await runCli(['stauts', 'conv-1'], env);
  expect(typo).toMatchObject({ code: 2, stdout: '' });
  expect(typo.stderr).toContain("unknown command 'stauts'");
  expect(typo.stderr).toContain('(Did you mean status?)');

  // A misused command shows its own usage, and still exits 2.
  const misused = await runCli(['status'], env);
  expect(misused).toMatchObject({ code: 2 });
  expect(misused.stderr).toContain('status needs ID');
  expect(misused.stderr).toContain('durable-agent status ID [--json]');
  expect(misused.stderr).not.toContain('durable-agent run [');
});
