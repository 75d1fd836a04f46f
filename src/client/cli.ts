#!/usr/bin/env node
import { abortCommand } from './commands/abort';
import { compactCommand } from './commands/compact';
import { approveCommand } from './commands/approve';
import { chooseCommand } from './commands/choose';
import { Cleanups, log } from './commands/cleanups';
import { exportCommand } from './commands/export';
import { gatewayCommand } from './commands/gateway';
import { historyCommand } from './commands/history';
import { listCommand } from './commands/list';
import { replayCommand } from './commands/replay';
import { runCommand } from './commands/run';
import { scheduleCommand } from './commands/schedule';
import { sendCommand } from './commands/send';
import { serverCommand } from './commands/server';
import { statusCommand } from './commands/status';
import { steerCommand } from './commands/steer';
import { UsageError } from './commands/usage-error';
import { watchCommand } from './commands/watch';
import { workerCommand } from './commands/worker';

const USAGE = `durable-agent: durable AI agents on Temporal

Usage:
  durable-agent run [--id ID] [--workspace DIR] [--json] [--no-worker] [--model NAME] [--system TEXT]
                    [--max-tool-iterations N] [--approval auto|ask] [--profile minimal|coding|messaging|full]
                    [--allow LIST] [--also-allow LIST] [--deny LIST] [--owners NAMES] [--sender NAME]
                    [--exec-security full|sandbox|safe-bin] "<prompt>"
  durable-agent send ID [--no-wait] [--json] [--sender NAME] [conversation flags of run] "<text>"
  durable-agent steer ID [--no-wait] [--json] [--sender NAME] "<text>"
  durable-agent abort ID [--reason TEXT] [--by NAME] [--json]
  durable-agent approve ID TOOL_CALL_ID [--always] [--reject] [--reason TEXT] [--by NAME] [--sha256 HASH]
                    [--key FILE] [--json]
  durable-agent choose ID TOOL_CALL_ID [N] [--by NAME] [--json]
  durable-agent compact ID [--json]
  durable-agent watch ID [--json] [--until-ended]
  durable-agent status ID [--json]
  durable-agent list [--json] [--limit N]
  durable-agent history ID [--json] [--executions N]
  durable-agent export ID FILE [--all-executions]
  durable-agent replay FILE|ID [--json] [--executions N]
  durable-agent schedule "<prompt>" --cron "<cron>" [--id SCHEDULE_ID] [--idle-timeout DURATION] [--json]
                    [conversation flags of run]
  durable-agent schedule list|delete SCHEDULE_ID|trigger SCHEDULE_ID [--json]
  durable-agent worker [--workspace DIR]
  durable-agent server [--port N] [--ui-port N] [--db FILE]
  durable-agent gateway [--tokens FILE] [--port N] [--host ADDRESS]

Environment: OPENAI_BASE_URL, OPENAI_API_KEY, AGENT_MODEL, AGENT_MODEL_PROVIDER, AGENT_TOOLS_ALLOW,
AGENT_TOOLS_DENY, AGENT_EXEC_SECURITY, AGENT_EXEC_SAFE_BINS, AGENT_TASK_QUEUE, TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS*,
DURABLE_AGENT_DATA_DIR (see docs/configuration.md).`;

type Command = (args: string[], cleanups: Cleanups) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  run: runCommand,
  send: sendCommand,
  steer: steerCommand,
  abort: abortCommand,
  approve: approveCommand,
  choose: chooseCommand,
  compact: compactCommand,
  watch: watchCommand,
  status: statusCommand,
  list: listCommand,
  history: historyCommand,
  export: exportCommand,
  replay: replayCommand,
  schedule: scheduleCommand,
  worker: workerCommand,
  server: serverCommand,
  gateway: gatewayCommand,
};

/** Commands that run a worker in this process (`replay` a replay worker) and so set up the worker runtime's logging. */
const WORKER_COMMANDS = new Set(['run', 'worker', 'server', 'replay']);

const cleanups = new Cleanups();

async function main([command, ...args]: string[]): Promise<number> {
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return command === undefined ? 2 : 0;
  }
  const run = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined;
  if (!run) throw new UsageError(`unknown command: ${command}`);
  return run(args, cleanups);
}

/** `run` keeps the terminal for the conversation (its errors arrive as events); a worker logs warnings for operators. */
async function installRuntime(command: string | undefined): Promise<void> {
  if (!command || !WORKER_COMMANDS.has(command)) return;
  const { Runtime, DefaultLogger } = await import('@temporalio/worker');
  if (command === 'replay') {
    // Replay reports nondeterminism itself; Temporal Core would also log each failed workflow task.
    Runtime.install({
      logger: new DefaultLogger('ERROR'),
      telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } },
    });
    return;
  }
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
