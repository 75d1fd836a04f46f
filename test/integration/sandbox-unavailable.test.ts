import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, realpathSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { AgentClient } from '../../src/client/agent-client';
import { sandboxAvailability } from '../../src/tools/exec/bubblewrap';
import { ask } from '../support/ask';
import { toolResultIn } from '../support/scripted-model';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';
import { killWorkerProcess, spawnWorkerProcess } from '../support/spawn-worker-process';

/**
 * A conversation that asked for `sandbox` on a worker where bubblewrap cannot make one: the command
 * is refused, never run in `full` instead, and the model reads why. The worker runs in a process of
 * its own whose bubblewrap exits 1 (as one without user namespaces does).
 */
let model: ScriptedModelServer | undefined;
let connection: Connection;
let client: Client;
let scratch: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  connection = await Connection.connect({ address: process.env.TEST_TEMPORAL_ADDRESS! });
  client = new Client({ connection });
  scratch = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-no-sandbox-'));
});
afterAll(async () => {
  for (const child of children) await killWorkerProcess(child);
  await model?.close();
  await connection.close();
  await rm(scratch, { recursive: true, force: true });
});

/**
 * The command line that starts the worker where bubblewrap fails: in a mount namespace of its own
 * (made by bubblewrap itself) with a `bwrap` that exits 1 over the real one. Where bubblewrap cannot
 * run at all, the worker needs no wrapper: it cannot make a sandbox either.
 */
async function whereBubblewrapFails(): Promise<string[]> {
  if (!sandboxAvailability().ok) return [];
  const fake = path.join(scratch, 'bwrap');
  await writeFile(fake, '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n');
  await chmod(fake, 0o755);
  const real = new Set(
    ['/usr/bin/bwrap', '/bin/bwrap', '/usr/local/bin/bwrap']
      .filter(existsSync)
      .map((file) => realpathSync(file)),
  );
  return [
    'bwrap',
    '--dev-bind',
    '/',
    '/',
    ...[...real].flatMap((file) => ['--ro-bind', fake, file]),
    '--die-with-parent',
    '--',
  ];
}

test('a conversation that asked for sandbox, on a worker that cannot make one: the command does not run, the model reads why', async () => {
  const workspace = await mkdtemp(path.join(scratch, 'ws-'));
  let sandboxedResult: string | undefined;
  model = await startScriptedModelServer([
    { toolCalls: [{ id: 'call_sandboxed', name: 'exec', arguments: { command: 'touch sandboxed-ran' } }] },
    (request) => {
      sandboxedResult = toolResultIn(request, 'call_sandboxed');
      return { text: 'No sandbox here.' };
    },
    { toolCalls: [{ id: 'call_full', name: 'exec', arguments: { command: 'touch full-ran' } }] },
    { text: 'Ran it.' },
  ]);
  const taskQueue = `no-sandbox-${randomUUID()}`;
  children.push(
    await spawnWorkerProcess(
      { TASK_QUEUE: taskQueue, OPENAI_BASE_URL: model.baseUrl, WORKSPACE: workspace, MARKER_DIR: workspace },
      { wrapper: await whereBubblewrapFails() },
    ),
  );
  const agent = new AgentClient(client, taskQueue);

  const sandboxed = await ask(agent, `conv-${randomUUID()}`, 'Touch the marker', {
    options: { execSecurity: 'sandbox', approval: { mode: 'auto' } },
  });
  expect(sandboxed.finished).toMatchObject({ outcome: 'answered', answer: 'No sandbox here.' });
  expect(existsSync(path.join(workspace, 'sandboxed-ran'))).toBe(false);
  expect(sandboxedResult).toMatch(
    /command refused: sandbox mode is required but bubblewrap (cannot create its sandbox here|\(bwrap\) is not installed)/,
  );
  expect(JSON.parse(sandboxedResult!)).toMatchObject({ status: 'error', tool: 'exec' });

  // The same worker runs the command for a conversation that asked for no sandbox: the refusal was the sandbox's.
  const full = await ask(agent, `conv-${randomUUID()}`, 'Touch the marker', {
    options: { approval: { mode: 'auto' } },
  });
  expect(full.finished).toMatchObject({ outcome: 'answered', answer: 'Ran it.' });
  expect(existsSync(path.join(workspace, 'full-ran'))).toBe(true);
});
