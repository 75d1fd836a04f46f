#!/usr/bin/env node
import { a2aCommand } from './commands/a2a';
import { abortCommand } from './commands/abort';
import { acpCommand } from './commands/acp';
import { codecServerCommand } from './commands/codec-server';
import { compactCommand } from './commands/compact';
import { takeConnectionFlags } from './connection-flags';
import { approveCommand } from './commands/approve';
import { delegateCommand } from './commands/delegate';
import { chooseCommand } from './commands/choose';
import { clusterCommand } from './commands/cluster';
import { deployCommand } from './commands/deploy';
import { Cleanups, log } from './cleanups';
import { endCommand } from './commands/end';
import { exitOf } from './exit-codes';
import { exportCommand } from './commands/export';
import { forkCommand } from './commands/fork';
import { rerunCommand } from './commands/rerun';
import { evalCommand } from './commands/eval';
import { consoleLinkCommand } from './commands/console-link';
import { gatewayCommand } from './commands/gateway';
import { historyCommand } from './commands/history';
import { listCommand } from './commands/list';
import { mcpCommand } from './commands/mcp';
import { modeCommand } from './commands/mode';
import { packageVersion } from '../platform/package-version';
import { replayCommand } from './commands/replay';
import { runCommand } from './commands/run';
import { scheduleCommand } from './commands/schedule';
import { sendCommand } from './commands/send';
import { serverCommand } from './commands/server';
import { statusCommand } from './commands/status';
import { steerCommand } from './commands/steer';
import { COMMAND_SUMMARIES, ENVIRONMENT_HELP, USAGE, usageOf } from './usage-text';
import { Command, CommanderError } from 'commander';
import { watchCommand } from './commands/watch';
import { workerCommand } from './commands/worker';

type CommandRunner = (args: string[], cleanups: Cleanups) => Promise<number>;

const COMMANDS: Record<string, CommandRunner> = {
  run: runCommand,
  send: sendCommand,
  steer: steerCommand,
  abort: abortCommand,
  end: endCommand,
  approve: approveCommand,
  delegate: delegateCommand,
  mode: modeCommand,
  choose: chooseCommand,
  compact: compactCommand,
  watch: watchCommand,
  status: statusCommand,
  list: listCommand,
  history: historyCommand,
  export: exportCommand,
  replay: replayCommand,
  fork: forkCommand,
  rerun: rerunCommand,
  eval: evalCommand,
  schedule: scheduleCommand,
  worker: workerCommand,
  server: serverCommand,
  cluster: clusterCommand,
  deploy: deployCommand,
  gateway: gatewayCommand,
  'console-link': consoleLinkCommand,
  acp: acpCommand,
  mcp: mcpCommand,
  a2a: a2aCommand,
  'codec-server': codecServerCommand,
};

/** Commands that run a worker in this process (`replay` a replay worker) and so set up the worker runtime's logging. */
const WORKER_COMMANDS = new Set(['run', 'worker', 'server', 'replay', 'acp']);

const cleanups = new Cleanups();

async function main(argv: string[]): Promise<number> {
  const [command, ...commandArgs] = argv;
  if (command === undefined) {
    process.stdout.write(`${USAGE}\n`);
    return 2;
  }
  // Temporal's profile flags are the variables they stand for, for this process and what it starts.
  const { args, profile, configFile, warning } = takeConnectionFlags(command, commandArgs);
  if (profile !== undefined) process.env.TEMPORAL_PROFILE = profile;
  if (configFile !== undefined) process.env.TEMPORAL_CONFIG_FILE = configFile;
  if (warning) log(warning);
  if (command === 'version') {
    process.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  let code = 0;
  const program = new Command('durable-agent')
    .usage('<command> [arguments]')
    .description(
      'Durable AI agents on Temporal: every conversation a workflow, every model and tool call an activity.',
    )
    .version(packageVersion(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'print this help')
    .helpCommand('help [command]', 'help on a command')
    .enablePositionalOptions()
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => process.stdout.write(text),
      writeErr: (text) => process.stderr.write(text),
    })
    .addHelpText('after', `\n${ENVIRONMENT_HELP}`);
  for (const [name, run] of Object.entries(COMMANDS)) {
    program
      .command(name)
      .description(COMMAND_SUMMARIES[name] ?? '')
      // Each command reads its own flags (node:util parseArgs): commander only finds the command.
      .helpOption(false)
      .allowUnknownOption()
      .allowExcessArguments()
      .passThroughOptions()
      .configureHelp({ formatHelp: () => commandHelp(name) })
      .action(async () => {
        if (args.includes('--help') || args.includes('-h')) {
          process.stdout.write(commandHelp(name));
          return;
        }
        code = await run(args, cleanups);
      });
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    // Help and version end here; an unknown command has been named, with the nearest one.
    return error.exitCode === 0 ? 0 : 2;
  }
  return code;
}

/** The usage lines of the command that was misused, or all of them. */
function usageFor(command: string | undefined): string {
  const own = command ? usageOf(command) : undefined;
  return own ? `Usage:\n${own}\n\ndurable-agent ${command} --help says more.` : USAGE;
}

/** One command's help: what it does, how it is called, where the flags are explained. */
function commandHelp(name: string): string {
  return `${COMMAND_SUMMARIES[name] ?? name}\n\nUsage:\n${usageOf(name) ?? `  durable-agent ${name}`}\n\nSee docs/commands.md for what each flag does.\n`;
}

/** `run` keeps the terminal for the conversation (its errors arrive as events); workers and `acp` log warnings for operators. */
async function installRuntime(command: string | undefined, args: string[]): Promise<void> {
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
  const level = command === 'run' ? 'ERROR' : 'WARN';
  const { metricsEndpointFrom, prometheusTelemetry } = await import('../worker/metrics-endpoint');
  const metrics = metricsEndpointFrom(args, process.env);
  // Temporal Core's own logs would go to stdout, which holds answers (and for `acp` the protocol):
  // they are forwarded to the logger, which writes to stderr.
  Runtime.install({
    logger: new DefaultLogger(level),
    telemetryOptions: {
      logging: { filter: { core: level, other: level }, forward: {} },
      ...(metrics ? { metrics: prometheusTelemetry(metrics) } : {}),
    },
  });
  if (metrics) log(`metrics on http://${metrics.host}:${metrics.port}/metrics`);
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

installRuntime(process.argv[2], process.argv.slice(3))
  .then(() => main(process.argv.slice(2)))
  .then(async (code) => {
    await cleanups.runAll();
    process.exit(code);
  })
  .catch(async (error: Error) => {
    const exit = exitOf(error);
    log(exit.usage ? `${error.message}\n\n${usageFor(process.argv[2])}` : `durable-agent: ${error.message}`);
    await cleanups.runAll();
    process.exit(exit.code);
  });
