import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AgentClient } from '../../src/client/agent-client';
import { LiveModelText } from '../../src/client/live-model-text';
import type { AgentEvent } from '../../src/shared/events';
import { CLI, assertCliBuilt, runCli, startCli } from '../support/cli-process';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { startScriptedModelServer } from '../support/scripted-model-server';
import { waitFor } from '../support/test-worker';
import { unclaimedPorts } from '../support/unclaimed-port';

const harness = useNockedHarness([]);

type ModelText = Extract<AgentEvent, { type: 'model_text' }>;
const ESC = String.fromCharCode(27);

/**
 * About 100 KB of UTF-8 in 34,000 characters, nearly all three bytes long: the end of it that a
 * heartbeat repeats is over the 32 KiB the payload codec compresses above.
 */
function longAnswer(): string {
  const line = `${'流れる水は腐らず、戸枢は蠹まず。'.repeat(4)} (a proverb)\n`;
  return line.repeat(Math.ceil(34_000 / line.length)).slice(0, 34_000);
}

/** Every piece of text is where the answer has it, and nothing is repeated. */
function expectPiecesOf(answer: string, pieces: ModelText[]): void {
  let end = 0;
  for (const piece of pieces) {
    expect(piece.text).toBe(answer.slice(piece.offset, piece.offset + piece.text.length));
    expect(piece.offset).toBeGreaterThanOrEqual(end);
    end = piece.offset + piece.text.length;
  }
}

test('watchers in the worker’s process get the model’s text while it streams, all of it, once', async () => {
  const answer = longAnswer();
  const script = nockModel([{ text: answer, textChunks: 50, chunkDelayMs: 40 }]);
  const id = `conv-${randomUUID()}`;
  await harness().agent.start(id);
  const pieces: Array<ModelText & { partsSentThen: number }> = [];
  const order: string[] = [];
  const watching = (async () => {
    for await (const event of harness().agent.watch(id, {
      afterSeq: 0,
      until: (event) => event.type === 'run_finished',
    })) {
      order.push(event.type);
      if (event.type === 'model_text') pieces.push({ ...event, partsSentThen: script.partsSent });
    }
  })();
  await harness().agent.send(id, 'Tell me a long story');
  await watching;

  // The text sits where it happened: after the run started, before the model's response.
  expect(order.indexOf('model_text')).toBeGreaterThan(order.indexOf('run_started'));
  expect(order.lastIndexOf('model_text')).toBeLessThan(order.indexOf('model_response'));

  expectPiecesOf(answer, pieces);
  expect(pieces.map((piece) => piece.text).join('')).toBe(answer);
  // Text was passed on while the model was still sending, piece by piece, not once at the end.
  expect(pieces.length).toBeGreaterThan(10);
  expect(pieces[0]!.partsSentThen).toBeLessThan(10);
}, 60_000);

test('a watcher in another process sees the streaming text from heartbeats, decoded through the codecs', async () => {
  const answer = longAnswer();
  nockModel([{ text: answer, textChunks: 60, chunkDelayMs: 60 }]);
  // Not the process-wide hand-over: this client only sees what the server holds.
  const elsewhere = new AgentClient(harness().client, harness().agent.taskQueue, new LiveModelText());
  const id = `conv-${randomUUID()}`;
  await harness().agent.start(id);
  const pieces: ModelText[] = [];
  let finished: AgentEvent | undefined;
  const watching = (async () => {
    for await (const event of elsewhere.watch(id, {
      afterSeq: 0,
      until: (event) => event.type === 'run_finished',
    })) {
      if (event.type === 'model_text') pieces.push(event);
      finished = event;
    }
  })();
  await harness().agent.send(id, 'Tell me a long story');
  await watching;

  expect(finished).toMatchObject({ type: 'run_finished', answer });
  expect(pieces.length).toBeGreaterThan(0);
  expectPiecesOf(answer, pieces);
}, 60_000);

describe('the command line', () => {
  beforeAll(assertCliBuilt);

  test('run and watch, with the worker in a process of its own, carry a 100 KB streamed answer to the end', async () => {
    const answer = longAnswer();
    const model = await startScriptedModelServer([{ text: answer, textChunks: 100, chunkDelayMs: 80 }]);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DURABLE_AGENT_DATA_DIR: await mkdtemp(path.join(os.tmpdir(), 'durable-agent-data-')),
      ...(await serverPorts()),
      OPENAI_BASE_URL: model.baseUrl,
      AGENT_MODEL: 'scripted-model',
    };
    delete env.TEMPORAL_ADDRESS;
    const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-live-ws-'));
    const worker = startCli(['worker', '--workspace', workspace], env);
    try {
      await worker.stderrMatching(/worker on task queue/);
      const run = startCli(
        ['run', '--no-worker', '--workspace', workspace, '--id', 'live-text', 'Tell me a long story'],
        env,
      );
      await waitFor(async () => (model.script.requests.length > 0 ? true : undefined), 'the model call');
      const watched = await runCli(['watch', 'live-text', '--json'], env);
      const ran = await run.done;

      expect(ran).toMatchObject({ code: 0, stdout: `${answer}\n` });
      if (watched.code !== 0) throw new Error(`watch failed: ${watched.stderr}`);
      const events = watched.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as AgentEvent);
      expect(events[events.length - 1]).toMatchObject({ type: 'run_finished', answer });
      const pieces = events.filter((event): event is ModelText => event.type === 'model_text');
      expect(pieces.length).toBeGreaterThan(0);
      expectPiecesOf(answer, pieces);
    } finally {
      worker.kill('SIGTERM');
      await worker.done;
      await model.close();
    }
  }, 240_000);

  /** A colour terminal's environment, on the test server's own task queue, with the scripted model. */
  function terminalEnv(modelBaseUrl: string): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS,
      AGENT_TASK_QUEUE: `tty-${randomUUID()}`,
      OPENAI_BASE_URL: modelBaseUrl,
      AGENT_MODEL: 'scripted-model',
      TERM: 'xterm-256color',
    };
    delete env.NO_COLOR;
    return env;
  }

  /** `durable-agent run` on a pseudo-terminal (util-linux `script`), as a person at a terminal sees it. */
  async function runOnTerminal(
    args: string[],
    env: NodeJS.ProcessEnv,
  ): Promise<{ code: number | null; screen: string }> {
    if (!existsSync('/usr/bin/script')) {
      throw new Error(
        'this test needs `script` from util-linux (Debian: apt-get install bsdutils) for a pseudo-terminal',
      );
    }
    const quoted = [process.execPath, CLI, ...args].map((arg) => `'${arg.replace(/'/g, "'\\''")}'`).join(' ');
    const child = spawn('/usr/bin/script', ['-qec', quoted, '/dev/null'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.setEncoding('utf8');
    let screen = '';
    child.stdout.on('data', (chunk: string) => (screen += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    return { code, screen };
  }

  test('on a terminal, run shows a live line while the model works, streams the answer once, colours unless NO_COLOR', async () => {
    const answer = 'Hello from a slow model.';
    const turn = [
      { toolCalls: [{ name: 'read', arguments: { path: 'notes.txt' } }] },
      { text: answer, textChunks: 5, chunkDelayMs: 300 },
    ];
    const model = await startScriptedModelServer([...turn, ...turn]);
    try {
      const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-tty-'));
      await writeFile(path.join(workspace, 'notes.txt'), 'a note');
      const env = terminalEnv(model.baseUrl);
      const coloured = await runOnTerminal(['run', '--workspace', workspace, 'Read my notes'], env);
      expect(coloured.code).toBe(0);
      expect(coloured.screen).toContain('waiting for the model');
      expect(coloured.screen.split(answer)).toHaveLength(2);
      expect(coloured.screen).toContain('\x1b[36m→ read');

      const plain = await runOnTerminal(['run', '--workspace', workspace, 'Read my notes'], {
        ...env,
        NO_COLOR: '1',
      });
      expect(plain.code).toBe(0);
      expect(plain.screen.split(answer)).toHaveLength(2);
      expect(plain.screen).toContain('→ read');
      expect(plain.screen).not.toMatch(new RegExp(`${ESC}\\[3\\dm`));
    } finally {
      await model.close();
    }
  }, 120_000);

  test('what a model writes cannot drive the terminal: run, history and status show its text without escapes', async () => {
    // A clipboard write, a retitle, a screen clear, a carriage return that would hide what came
    // before it, an 8-bit CSI and a right-to-left override: in a tool call's arguments and streamed.
    const hostile = `${ESC}]52;c;cm0gLXJmIH4=\x07Done${ESC}]0;owned\x07${ESC}[2J\rHidden\u202Eevil\x9b31m.`;
    const turn = [
      { toolCalls: [{ name: 'read', arguments: { path: `${ESC}[2Jnotes.txt` } }] },
      { text: hostile, textChunks: 4, chunkDelayMs: 100 },
    ];
    const model = await startScriptedModelServer(turn);
    let worker: ReturnType<typeof startCli> | undefined;
    try {
      const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-tty-'));
      const id = `hostile-${randomUUID()}`;
      const env = terminalEnv(model.baseUrl);
      // A worker of its own, so that status can ask the conversation after the run.
      worker = startCli(['worker', '--workspace', workspace], env);
      await worker.stderrMatching(/worker on task queue/);
      const ran = await runOnTerminal(
        ['run', '--no-worker', '--workspace', workspace, '--id', id, 'Read my notes'],
        env,
      );
      expect(ran.code).toBe(0);
      expect(ran.screen).toContain('\x1b[36m→ read');
      // Cut across the streamed pieces, each sequence is still dropped whole.
      expect(ran.screen).toContain('DoneHiddenevil31m.');
      expect(ran.screen).not.toContain('52;c;');
      const [history, atRun, status] = await Promise.all([
        runCli(['history', id], env),
        runCli(['history', id, '--at', '1'], env),
        runCli(['status', id], env),
      ]);
      for (const shown of [ran.screen, history.stdout, atRun.stdout, status.stdout]) {
        for (const sequence of [`${ESC}]`, `${ESC}[2J`, '\u202E', '\x9b', '\x07']) {
          expect(shown).not.toContain(sequence);
        }
      }
      expect(history.stdout).toContain('Hiddenevil31m.');
      expect(atRun.stdout).toContain('assistant: [calls read');
      expect(atRun.stdout).toContain('assistant: Done Hiddenevil31m.');
      expect(status).toMatchObject({ code: 0, stdout: expect.stringContaining(`conversation ${id}: idle`) });
      for (const printed of [history.stdout, atRun.stdout, status.stdout]) {
        expect(printed).not.toContain(ESC);
        expect(printed).not.toContain('\r');
      }
    } finally {
      worker?.kill('SIGTERM');
      await worker?.done;
      await model.close();
    }
  }, 120_000);
});

/** The embedded server's and its UI's ports, chosen where no other test process is handed them meanwhile. */
async function serverPorts(): Promise<NodeJS.ProcessEnv> {
  const [server, ui] = await unclaimedPorts(2);
  return { DURABLE_AGENT_SERVER_PORT: String(server), DURABLE_AGENT_UI_PORT: String(ui) };
}
