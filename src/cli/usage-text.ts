const ENVIRONMENT_HELP_TEXT = `Environment: OPENAI_BASE_URL, OPENAI_API_KEY, AGENT_MODEL, AGENT_MODEL_PROVIDER, AGENT_TOOLS_ALLOW,
AGENT_TOOLS_DENY, AGENT_EXEC_SECURITY, AGENT_EXEC_SAFE_BINS, AGENT_TASK_QUEUE, AGENT_DEPLOYMENT_NAME, AGENT_BUILD_ID,
TEMPORAL_PROFILE, TEMPORAL_CONFIG_FILE, TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS*,
DURABLE_AGENT_DATA_DIR, DURABLE_AGENT_METRICS_PORT, OTEL_EXPORTER_OTLP_ENDPOINT (see docs/configuration.md).`;

/** Which variables configure durable-agent, for the end of `help`. */
export const ENVIRONMENT_HELP = ENVIRONMENT_HELP_TEXT;

/** What the command line takes, as `help` prints it. */
export const USAGE = `durable-agent: durable AI agents on Temporal

Usage:
  durable-agent run [--id ID] [--workspace DIR] [--json] [--no-worker] [--model NAME]
                    [--system TEXT | --system-prompt FILE] [--append-system-prompt FILE]
                    [--max-tool-iterations N] [--approval auto|ask] [--tool-profile minimal|coding|messaging|full]
                    [--allow LIST] [--also-allow LIST] [--deny LIST] [--owners NAMES] [--sender NAME]
                    [--exec-security full|sandbox|safe-bin] [--budget-tokens N] [--budget-tool-calls N]
                    [--budget-usd AMOUNT] [--deadline DURATION] "<prompt>"
  durable-agent send ID [--no-wait] [--json] [--sender NAME] [conversation flags of run] "<text>"
  durable-agent steer ID [--no-wait] [--json] [--sender NAME] "<text>"
  durable-agent abort ID [--reason TEXT] [--by NAME] [--json]
  durable-agent end ID [--reason TEXT] [--json]
  durable-agent approve ID TOOL_CALL_ID [--always] [--reject] [--reason TEXT] [--by NAME] [--sha256 HASH]
                    [--key FILE] [--delegation FILE] [--raise-tokens N] [--raise-tool-calls N]
                    [--raise-deadline DURATION] [--raise-usd AMOUNT] [--json]
  durable-agent delegate --to NAME --for DURATION --key FILE [--by NAME]
  durable-agent mode ID default|ask|auto [--by NAME] [--key FILE] [--json]
  durable-agent choose ID TOOL_CALL_ID [N] [--by NAME] [--json]
  durable-agent compact ID [--json]
  durable-agent watch ID [--json] [--until-ended]
  durable-agent status ID [--json]
  durable-agent list [--json] [--limit N]
  durable-agent history ID|FILE [--json] [--executions N] [--at N]
  durable-agent export ID FILE [--all-executions] [--json]
  durable-agent replay FILE|ID [--json] [--executions N]
  durable-agent fork ID|FILE --at N [--id NEW] [--workspace DIR] [--json]
  durable-agent rerun ID|FILE [--at N] [--model M] [--base-url URL] [--system-prompt FILE]
                    [--tools recorded|live|ask] [--id NEW] [--workspace DIR] [--json] [--no-worker]
  durable-agent eval FILE [--out DIR] [--workspace DIR] [--json] [--no-worker]
  durable-agent schedule "<prompt>" --cron "<cron>" [--id SCHEDULE_ID] [--idle-timeout DURATION] [--json]
                    [conversation flags of run]
  durable-agent schedule list|delete SCHEDULE_ID|trigger SCHEDULE_ID [--json]
  durable-agent worker [--workspace DIR] [--metrics-port PORT] [--health-port PORT]
  durable-agent server [--port N] [--ui-port N] [--db FILE]
  durable-agent cluster start|stop|status [--dir DIR] [--port PORT] [--tls|--no-tls] [--json]
  durable-agent deploy list|describe NAME|set-current NAME BUILD|ramp NAME BUILD PERCENT|rollback NAME [--json]
  durable-agent gateway [--tokens FILE] [--port N] [--host ADDRESS] [--max-streams N] [--trust-proxy ADDRESSES] [--tls-cert FILE --tls-key FILE] [--a2a-card FILE] [--metrics-port PORT]
  durable-agent console-link --token-name NAME [--minutes N] [--tokens FILE] [--gateway-url URL]
  durable-agent acp [--no-worker] [--workspace DIR]
  durable-agent mcp [--user NAME] [--key FILE]
  durable-agent a2a card URL [--token TOKEN] [--json]
  durable-agent a2a send URL "<text>" [--task-id ID] [--timeout SECONDS] [--token TOKEN] [--json]
  durable-agent codec-server [--port N] [--host ADDRESS] [--ui-origin URL]... [--exit-with PID]

Every command takes --profile NAME and --config-file PATH: the profile of Temporal's client configuration
file (temporal.toml) to connect with, as the temporal CLI does.

${ENVIRONMENT_HELP_TEXT}`;

/** What each command does, in a line: `help` lists them, `help COMMAND` starts with it. */
export const COMMAND_SUMMARIES: Readonly<Record<string, string>> = {
  run: 'start a conversation (or continue one with --id) and print its answer',
  send: 'send a message to a conversation and print the answer of the run it starts',
  steer: 'redirect the run in progress: its tools stop, the message joins, the run goes on',
  abort: 'stop the run in progress',
  end: 'end a conversation once its current run is done',
  approve: 'allow or reject a tool call that waits for approval, or raise a budget a run has reached',
  delegate: 'sign a delegation: another approver decides in your place under approval policies, for a while',
  mode: 'set the approval mode of a running conversation (asking for less is a signed decision)',
  choose: 'answer a question a tool asked the person',
  compact: 'summarise the oldest turns of a conversation now',
  watch: 'follow the run in progress (or the next one) as it happens',
  status: 'a conversation in a few lines: state, runs, approvals, Web UI link',
  list: 'conversations on the server, newest first',
  history: 'what happened, step by step, from the Temporal history',
  export: 'save a conversation’s history to a file (for replay elsewhere)',
  replay: 'replay a saved history (or a conversation) against this version’s workflow code',
  fork: 'a new conversation with another’s transcript up to the end of one of its runs',
  rerun: 'run a conversation’s messages again against another model or prompt, recorded tool results served',
  eval: 'rerun a list of recorded conversations with one variant and write a report',
  schedule: 'start conversations on a cron schedule; list, delete or trigger schedules',
  worker: 'serve conversations: model calls and tools run here',
  server: 'run the embedded Temporal server in the foreground',
  cluster: 'a self-hosted Temporal cluster on this machine (PostgreSQL, four services): start, stop, status',
  deploy: 'worker deployments: which build new conversations start on; ramp, set current, roll back',
  gateway:
    'the HTTP gateway for other services (tokens, SSE events, signed approvals) and the console at /console',
  'console-link': "a one-time sign-in link to the gateway's console for a token of its tokens file",
  acp: 'serve an editor over the Agent Client Protocol on stdio',
  mcp: 'serve an MCP client (a desktop assistant) on stdio: it starts tasks for agents and follows them',
  a2a: 'try a remote A2A agent: print its card, or send it a message and print its answer',
  'codec-server': 'decode compressed and offloaded payloads for the Temporal Web UI',
};

/** The usage lines of one command (its lines and the continuation lines under them), or undefined. */
export function usageOf(command: string): string | undefined {
  const own: string[] = [];
  for (const line of USAGE.split('\n')) {
    const opens = line === `  durable-agent ${command}` || line.startsWith(`  durable-agent ${command} `);
    const continues = own.length > 0 && /^ {6,}\S/.test(line);
    if (opens || continues) own.push(line);
    else if (own.length > 0) break;
  }
  return own.length > 0 ? own.join('\n') : undefined;
}
