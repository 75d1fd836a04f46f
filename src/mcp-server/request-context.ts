import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type {
  JSONRPCMessage,
  ProgressToken,
  ServerNotification,
  ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import type { AgentClient, RunToFollow } from '../client/agent-client';
import type { RunEnd } from '../client/run-end';
import { RELATED_TASK_META_KEY } from '@modelcontextprotocol/sdk/types.js';
import { ApprovalAsker } from './approval-elicitation';
import type { McpCaller } from './mcp-caller';
import type { McpSession } from './mcp-session';
import { followWithProgress } from './run-follower';

/** What the MCP server is built from, for one caller. */
export interface AgentMcpDeps {
  agent: AgentClient;
  caller: McpCaller;
  /** What is known of the client: fixed for an HTTP request (its session id), learnt at initialize over stdio. */
  session: () => McpSession;
  version: string;
  /** Lines for the operator (stderr), never for the client. */
  log: (line: string) => void;
  /**
   * Counts a request that waits on a run (a call with wait_seconds, `tasks/result`) against the
   * caller's limit, throwing when it is reached; returns its release.
   */
  openWait?: () => () => void;
}

export type HandlerExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** One request being handled: the server's dependencies, the SDK's request extras, and a way to write on its stream. */
export interface RequestContext {
  deps: AgentMcpDeps;
  extra: HandlerExtra;
  /** Writes a message (a question, a withdrawal) on the stream of this request. */
  send: (message: JSONRPCMessage) => Promise<void>;
}

/**
 * Follows the run that takes a message for the request in `context` until it ends or `stop`:
 * progress notifications under `progressToken` (when the client gave one), and the run's approvals
 * asked of the client's person when it answers form elicitations and the caller may decide.
 */
export async function followForRequest(
  context: RequestContext,
  target: RunToFollow,
  options: { stop?: AbortSignal; progressToken?: ProgressToken; relatedTaskId?: string } = {},
): Promise<RunEnd> {
  const { deps, extra } = context;
  const release = deps.openWait?.() ?? (() => undefined);
  try {
    const related =
      options.relatedTaskId !== undefined
        ? { _meta: { [RELATED_TASK_META_KEY]: { taskId: options.relatedTaskId } } }
        : {};
    let sent = 0;
    const { progressToken } = options;
    const progress =
      progressToken === undefined
        ? undefined
        : (message: string) =>
            extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken, progress: ++sent, message, ...related },
            });
    const asker =
      deps.session().elicits && deps.caller.mayEver('approve')
        ? new ApprovalAsker({
            agent: deps.agent,
            conversationId: target.conversationId,
            send: context.send,
            ...(options.relatedTaskId !== undefined ? { relatedTaskId: options.relatedTaskId } : {}),
          })
        : undefined;
    return await followWithProgress(deps.agent, target, {
      ...(progress ? { progress } : {}),
      ...(asker ? { asker } : {}),
      recheck: () => deps.caller.recheck(),
      signal: options.stop ? AbortSignal.any([extra.signal, options.stop]) : extra.signal,
    });
  } finally {
    release();
  }
}

/** A refusal of a task request, as the protocol says it (`-32602`). */
export function invalidTaskParams(message: string): McpError {
  return new McpError(ErrorCode.InvalidParams, message);
}
