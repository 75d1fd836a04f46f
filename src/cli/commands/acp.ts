import os from 'node:os';
import path from 'node:path';
import { Readable, Writable } from 'node:stream';
import { type Cleanups, log } from '../cleanups';
import { connectAgent } from '../connect-agent';
import { noModelConfigured, startLocalWorker } from '../local-services';
import { packageVersion } from '../../platform/package-version';
import { parseCommandArgs } from '../parse-command-args';
import { currentUserName } from '../user-name';

export interface AcpArgs {
  startWorker: boolean;
  /** The in-process worker's default workspace; each session works in its own `cwd`. */
  workspace: string;
}

export function parseAcpArgs(args: string[], cwd = process.cwd()): AcpArgs {
  const { values } = parseCommandArgs('acp', {
    args,
    allowPositionals: false,
    options: {
      'no-worker': { type: 'boolean', default: false },
      workspace: { type: 'string' },
    },
  });
  return { startWorker: !values['no-worker'], workspace: path.resolve(cwd, values.workspace ?? '.') };
}

/**
 * `acp`: an Agent Client Protocol agent on stdio for editors (Zed and others). stdout carries only
 * the protocol; everything for people goes to stderr. Runs until the editor closes stdin.
 */
export async function acpCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const acp = parseAcpArgs(args);
  if (acp.startWorker && (await noModelConfigured())) return 2;
  const { agent, settings, address } = await connectAgent(cleanups, { startServer: true });
  // An editor opens sessions in any of the person's projects: the worker here takes workspaces
  // under their home directory unless AGENT_WORKSPACE_ROOTS says otherwise.
  const workspaceRoots = (process.env.AGENT_WORKSPACE_ROOTS || os.homedir()).split(':').filter(Boolean);
  // The MCP servers editors name join the worker here; remote workers cannot start them.
  const editorMcp = acp.startWorker
    ? new (await import('../../mcp/mcp-server-set')).McpServerSet()
    : undefined;
  if (acp.startWorker) {
    await startLocalWorker(
      {
        settings,
        address,
        workspace: acp.workspace,
        env: { ...process.env, AGENT_WORKSPACE_ROOTS: workspaceRoots.join(':') },
        moreSources: editorMcp ? [editorMcp] : [],
      },
      cleanups,
    );
  }
  const [{ ndJsonStream }, { createAcpAgent }] = await Promise.all([
    import('@agentclientprotocol/sdk'),
    import('../../acp/acp-agent'),
  ]);
  const connection = createAcpAgent({
    agent,
    user: currentUserName(),
    version: packageVersion(),
    log,
    ...(acp.startWorker ? { workspaceRoots } : {}),
    ...(editorMcp ? { mcpServers: editorMcp } : {}),
  }).connect(ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
  log(`durable-agent ACP agent on stdio (task queue ${settings.taskQueue} at ${address})`);
  await connection.closed;
  return 0;
}
