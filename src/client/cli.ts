#!/usr/bin/env node
import { Cleanups, log } from './commands/cleanups';
import { runCommand } from './commands/run';
import { serverCommand } from './commands/server';
import { UsageError } from './commands/usage-error';
import { workerCommand } from './commands/worker';

const USAGE = `durable-agent: durable AI agents on Temporal

Usage:
  durable-agent run [--id ID] [--workspace DIR] [--json] [--no-worker] [--model NAME]
                    [--system TEXT] [--max-tool-iterations N] "<prompt>"
  durable-agent worker [--workspace DIR]
  durable-agent server [--port N] [--ui-port N] [--db FILE]

Environment: OPENAI_BASE_URL, OPENAI_API_KEY, AGENT_MODEL, AGENT_TASK_QUEUE, TEMPORAL_ADDRESS,
TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS*, DURABLE_AGENT_DATA_DIR (see README.md).`;

const cleanups = new Cleanups();

async function main([command, ...args]: string[]): Promise<number> {
  switch (command) {
    case 'run':
      return runCommand(args, cleanups);
    case 'worker':
      return workerCommand(args, cleanups);
    case 'server':
      return serverCommand(args, cleanups);
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

/** `run` keeps the terminal for the conversation (its errors arrive as events); a worker logs warnings for operators. */
async function installRuntime(command: string | undefined): Promise<void> {
  const { Runtime, DefaultLogger } = await import('@temporalio/worker');
  Runtime.install({ logger: new DefaultLogger(command === 'run' ? 'ERROR' : 'WARN') });
}

// The first Ctrl-C stops gracefully (workers finish running activities); a second one stops now.
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (interrupted) process.exit(130);
    interrupted = true;
    log('stopping…');
    void cleanups.runAll().then(() => process.exit(130));
  });
}

installRuntime(process.argv[2])
  .then(() => main(process.argv.slice(2)))
  .then(async (code) => {
    await cleanups.runAll();
    process.exit(code);
  })
  .catch(async (error: Error) => {
    log(error instanceof UsageError ? `${error.message}\n\n${USAGE}` : `durable-agent: ${error.message}`);
    await cleanups.runAll();
    process.exit(error instanceof UsageError ? 2 : 1);
  });
