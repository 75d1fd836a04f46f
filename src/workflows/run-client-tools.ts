import type { ClientTool } from '../shared/client-tools';
import type { UserMessage } from '../shared/messages';
import type { ToolDescriptor } from '../shared/tool-descriptor';
import type { ClientToolCalls } from './client-tool-calls';
import type { WorkflowToolRunner } from './tool-fan-out';

/**
 * The client tools one run offers the model besides the worker's: those of the newest of its
 * messages that offers any. A name a worker tool or the runtime already has stays theirs: the
 * client's tool of that name is left out, with a warning.
 */
export class RunClientTools {
  /** The tools offered, as the model call sends their schemas. */
  readonly tools: ClientTool[];
  /** Their descriptors, for the fan-out's checks (unknown tool, approval): low risk, run in the workflow. */
  readonly descriptors: ReadonlyMap<string, ToolDescriptor>;
  /** The names left out, for the event log. */
  readonly warnings: string[];

  constructor(offered: readonly ClientTool[], taken: (name: string) => boolean) {
    const kept = offered.filter((tool) => !taken(tool.name));
    this.tools = kept;
    this.descriptors = new Map(kept.map((tool) => [tool.name, clientToolDescriptor(tool)]));
    this.warnings = offered
      .filter((tool) => taken(tool.name))
      .map((tool) => `client tool ${tool.name} left out: the agent has a tool of that name`);
  }

  /** Each tool's runner: the call waits in the workflow for its sender's result. */
  runners(calls: ClientToolCalls, run: number): Map<string, WorkflowToolRunner> {
    return new Map(this.tools.map((tool) => [tool.name, (call) => calls.outcomeOf(call, run)]));
  }
}

/** The client tools of the newest of `messages` that offers any; none when no message does. */
export function newestClientTools(messages: readonly UserMessage[]): ClientTool[] {
  for (let index = messages.length - 1; index >= 0; index--) {
    const tools = messages[index]!.clientTools;
    if (tools?.length) return tools;
  }
  return [];
}

/** A message as the transcript keeps it: without the tools its sender offered. */
export function withoutClientTools(message: UserMessage): UserMessage {
  if (message.clientTools === undefined) return message;
  const { clientTools: _tools, ...kept } = message;
  return kept;
}

/** What the fan-out needs of a client tool: it runs in the workflow, so its timeouts and retries are never used. */
function clientToolDescriptor(tool: ClientTool): ToolDescriptor {
  return {
    name: tool.name,
    label: tool.name,
    category: 'other',
    idempotent: false,
    startToCloseTimeoutMs: 1,
    heartbeatTimeoutMs: 1,
    retry: { maximumAttempts: 1, initialIntervalMs: 1, backoffCoefficient: 1, maximumIntervalMs: 1 },
    risk: 'low',
  };
}
