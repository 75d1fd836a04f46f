#!/usr/bin/env node
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from '@temporalio/client';
import { connectionSettingsFromEnv } from '../shared/connection-settings';
import { assertConversationId } from '../shared/ids';
import { AgentClient } from './agent-client';
import { renderProgress } from './render-progress';

const USAGE = `durable-agent: durable AI agents on Temporal

Usage:
  durable-agent run [--id ID] [--workspace DIR] [--json] [--no-worker] [--model NAME]
                    [--system TEXT] [--max-tool-iterations N] "<prompt>"
  durable-agent worker [--workspace DIR]
  durable-agent server [--port N] [--ui-port N] [--db FILE]

Environment: OPENAI_BASE_URL, OPENAI_API_KEY, AGENT_MODEL, AGENT_TASK_QUEUE, TEMPORAL_ADDRESS,
TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS*, DURABLE_AGENT_DATA_DIR (see README.md).`;

class UsageError extends Error {}

type Cleanup = () => Promise<void>;
const cleanups: Cleanup[] = [];
const log = (line: string) => process.stderr.write(`${line}\n`);

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'run':
      return runCommand(rest);
    case 'worker':
      return workerCommand(rest);
    case 'server':
      return serverCommand(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${USAGE}\n`);
      return command === undefined ? 2 : 0;
    default:
      throw new UsageError(`unknown command: ${command}`);
  }
}

async function runCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      id: { type: 'string' },
      workspace: { type: 'string' },
      json: { type: 'boolean', default: false },
      'no-worker': { type: 'boolean', default: false },
      model: { type: 'string' },
      system: { type: 'string' },
      'max-tool-iterations': { type: 'string' },
    },
  });
  const prompt = positionals.join(' ').trim();
  if (!prompt) throw new UsageError('run needs a prompt');
  const conversationId = assertConversationId(values.id ?? `conv-${randomUUID()}`);
  const workspace = path.resolve(values.workspace ?? process.cwd());
  const maxToolIterations =
    values['max-tool-iterations'] === undefined ? undefined : Number(values['max-tool-iterations']);

  const { modelSettingsFromEnv, MODEL_SETUP_HELP } = await import('../worker/model-settings');
  const model = modelSettingsFromEnv(process.env);
  if (!values['no-worker'] && !model) {
    log(MODEL_SETUP_HELP);
    return 2;
  }

  const settings = connectionSettingsFromEnv(process.env);
  const address = await ensureServer(settings);
  const { connectClient } = await import('../worker/connect');
  const connection = await connectClient(settings, address);
  cleanups.push(() => connection.close());
  if (!values['no-worker']) await startInProcessWorker(settings, address, workspace);

  const agent = new AgentClient(
    new Client({ connection, namespace: settings.namespace }),
    settings.taskQueue,
  );
  const sent = await agent.send(conversationId, prompt, {
    options: { workspace, model: values.model, systemPrompt: values.system, maxToolIterations },
  });
  if (!values.json) log(`conversation ${conversationId}`);
  const follow = agent.follow(sent);
  const noWorkerHint = setTimeout(
    () =>
      log(
        `Nothing has picked up the conversation yet: is a worker running on task queue ${settings.taskQueue}?`,
      ),
    15_000,
  );
  for (;;) {
    const next = await follow.next();
    clearTimeout(noWorkerHint);
    if (next.done) {
      const finished = next.value;
      if (values.json) return finished.outcome === 'answered' ? 0 : 1;
      if (finished.outcome !== 'answered') {
        log(`run ended without an answer (${finished.outcome}); see the error above`);
        return 1;
      }
      process.stdout.write(`${finished.answer}\n`);
      return 0;
    }
    if (values.json) {
      process.stdout.write(
        `${JSON.stringify(next.value.kind === 'event' ? next.value.event : { type: 'progress', ...next.value.progress })}\n`,
      );
    } else {
      const line = renderProgress(next.value);
      if (line) log(line);
    }
  }
}

async function workerCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { workspace: { type: 'string' } } });
  const { modelSettingsFromEnv, MODEL_SETUP_HELP } = await import('../worker/model-settings');
  if (!modelSettingsFromEnv(process.env)) {
    log(MODEL_SETUP_HELP);
    return 2;
  }
  const settings = connectionSettingsFromEnv(process.env);
  const address = await ensureServer(settings);
  const workspace = path.resolve(values.workspace ?? process.env.DURABLE_AGENT_WORKSPACE ?? process.cwd());
  const worker = await startInProcessWorker(settings, address, workspace);
  log(`worker on task queue ${settings.taskQueue} at ${address}, workspace ${workspace}; Ctrl-C stops it`);
  await worker.done;
  return 0;
}

async function serverCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { port: { type: 'string' }, 'ui-port': { type: 'string' }, db: { type: 'string' } },
  });
  const { embeddedServerSettings, startEmbeddedServer } = await import('../worker/ensure-server');
  const env = {
    ...process.env,
    ...(values.port ? { DURABLE_AGENT_SERVER_PORT: values.port } : {}),
    ...(values['ui-port'] ? { DURABLE_AGENT_UI_PORT: values['ui-port'] } : {}),
  };
  const embedded = embeddedServerSettings(env);
  if (values.db) embedded.dbFile = path.resolve(values.db);
  const server = await startEmbeddedServer(embedded, connectionSettingsFromEnv(env).namespace, env, log);
  cleanups.push(() => server.stop());
  log(`Temporal server ready on ${server.address}; Ctrl-C stops it`);
  await new Promise(() => {});
  return 0;
}

async function ensureServer(settings: ReturnType<typeof connectionSettingsFromEnv>): Promise<string> {
  const { ensureTemporalServer } = await import('../worker/ensure-server');
  const server = await ensureTemporalServer(settings, process.env, log);
  const embedded = server.embedded;
  if (embedded) {
    cleanups.push(async () => {
      // Another `run` or worker may have found this server and still need it.
      const { otherWorkersPoll } = await import('../worker/other-workers');
      const shared = await otherWorkersPoll(server.address, settings.namespace, settings.taskQueue).catch(
        () => false,
      );
      if (!shared) return embedded.stop();
      log(
        `Other workers still use the Temporal server on ${server.address}; leaving it running (pid ${embedded.pid}).`,
      );
      embedded.detach();
    });
  }
  return server.address;
}

async function startInProcessWorker(
  settings: ReturnType<typeof connectionSettingsFromEnv>,
  address: string,
  workspace: string,
): Promise<{ done: Promise<void> }> {
  const [
    { connectWorker },
    { createAgentWorker },
    { createOpenAiClient, modelSettingsFromEnv },
    { ToolRegistry },
    { builtinTools },
  ] = await Promise.all([
    import('../worker/connect'),
    import('../worker/create-worker'),
    import('../worker/model-settings'),
    import('../tools/registry'),
    import('../tools/builtin-tools'),
  ]);
  const model = modelSettingsFromEnv(process.env)!;
  const connection = await connectWorker(settings, address);
  const worker = await createAgentWorker({
    connection,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    activities: {
      openai: createOpenAiClient(model),
      defaultModel: model.model,
      tools: new ToolRegistry(builtinTools()),
      defaultWorkspace: workspace,
    },
  });
  const done = worker.run();
  cleanups.unshift(async () => {
    const inFlight = worker.getStatus().numInFlightActivities;
    if (inFlight > 0) {
      log(
        `Letting ${inFlight} running activities of other conversations finish before exiting (Ctrl-C again stops now).`,
      );
    }
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await done.catch(() => undefined);
    await connection.close();
  });
  return { done };
}

async function cleanUp(): Promise<void> {
  for (const cleanup of cleanups.splice(0)) {
    await cleanup().catch((error: Error) => log(`cleanup: ${error.message}`));
  }
}

/** `run` keeps the terminal for the conversation (its errors arrive as events); a worker logs warnings for operators. */
async function installRuntime(command: string | undefined): Promise<void> {
  const { Runtime, DefaultLogger } = await import('@temporalio/worker');
  Runtime.install({ logger: new DefaultLogger(command === 'run' ? 'ERROR' : 'WARN') });
}

let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    log('stopping…');
    void cleanUp().then(() => process.exit(130));
  });
}

installRuntime(process.argv[2])
  .then(() => main(process.argv.slice(2)))
  .then(async (code) => {
    await cleanUp();
    process.exit(code);
  })
  .catch(async (error: Error) => {
    log(error instanceof UsageError ? `${error.message}\n\n${USAGE}` : `durable-agent: ${error.message}`);
    await cleanUp();
    process.exit(error instanceof UsageError ? 2 : 1);
  });
