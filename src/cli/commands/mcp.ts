import { randomUUID } from 'node:crypto';
import { type Cleanups, log } from '../cleanups';
import { connectAgent } from '../connect-agent';
import { parseCommandArgs } from '../parse-command-args';
import { packageVersion } from '../../platform/package-version';
import { currentUserName } from '../user-name';

export interface McpArgs {
  /** Who messages and decisions from the desktop client are recorded as. */
  user: string;
  /** An Ed25519 private key (PEM) to sign decisions with, for workers that take signed decisions only. */
  keyFile?: string;
}

export function parseMcpArgs(args: string[], defaultUser: () => string = currentUserName): McpArgs {
  const { values } = parseCommandArgs('mcp', {
    args,
    allowPositionals: false,
    options: { user: { type: 'string' }, key: { type: 'string' } },
  });
  return { user: values.user ?? defaultUser(), ...(values.key !== undefined ? { keyFile: values.key } : {}) };
}

/**
 * `mcp`: the agent as an MCP server on stdio, for desktop clients that start a command. A Temporal
 * client like `send` (it starts no worker: workers serve the task queue); messages and decisions
 * are the user's. stdout carries only the protocol; everything for people goes to stderr. Runs
 * until the client closes stdin.
 */
export async function mcpCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const mcp = parseMcpArgs(args);
  const [{ readSigningKey }, { StdioServerTransport }, server, elicitation, caller, session] =
    await Promise.all([
      import('../../client/sign-decision'),
      import('@modelcontextprotocol/sdk/server/stdio.js'),
      import('../../mcp-server/agent-mcp-server'),
      import('../../mcp-server/approval-elicitation'),
      import('../../mcp-server/mcp-caller'),
      import('../../mcp-server/mcp-session'),
    ]);
  const key = mcp.keyFile !== undefined ? readSigningKey(mcp.keyFile) : undefined;
  const { agent, settings, address } = await connectAgent(cleanups, { startServer: true });
  const user = caller.localCaller(mcp.user, key);
  // One client for the life of this process: its nonce names its calls, its capabilities say what it answers.
  const nonce = randomUUID();
  const mcpServer = server.createAgentMcpServer({
    agent,
    caller: user,
    session: () => ({ nonce, elicits: session.elicitsForms(mcpServer.getClientCapabilities()) }),
    version: packageVersion(),
    log,
  });
  const transport = new StdioServerTransport();
  // The person's answers to approval questions: decided as they come, as the person.
  transport.onmessage = (message) => {
    const answer = elicitation.decisionAnswerOf(message);
    if (answer) void elicitation.applyDecisionAnswer(agent, user, answer, log);
  };
  mcpServer.onerror = (error) => {
    // Answers to our questions are none of the SDK's requests; they are handled above.
    if (!/response for an unknown message ID/.test(error.message)) log(`! ${error.message}`);
  };
  const closed = new Promise<void>((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
  });
  await mcpServer.connect(transport);
  log(`durable-agent MCP server on stdio as ${mcp.user} (task queue ${settings.taskQueue} at ${address})`);
  await closed;
  await mcpServer.close();
  return 0;
}
