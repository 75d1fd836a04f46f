import { isCancellation } from '@temporalio/workflow';
import type { ToolCall, ToolResultMessage } from '../shared/messages';
import type { ToolDescriptor } from '../shared/tool-descriptor';
import { type ToolOutcome, toolErrorOutcome } from '../shared/tool-errors';
import { toolActivitiesFor } from './activity-proxies';
import type { EventLog } from './event-log';
import { outcomeOfToolFailure } from './tool-failure';
import { workflowTime } from './workflow-time';

export interface FanOutContext {
  conversationId: string;
  run: number;
  workspace?: string;
  tools: ReadonlyMap<string, ToolDescriptor>;
  events: EventLog;
}

const PREVIEW_CHARS = 200;

/** Starts every call at once; results come back in the order the model asked for them. */
export function runToolCalls(calls: ToolCall[], context: FanOutContext): Promise<ToolResultMessage[]> {
  return Promise.all(calls.map((call) => runToolCall(call, context)));
}

async function runToolCall(call: ToolCall, context: FanOutContext): Promise<ToolResultMessage> {
  context.events.record(context.run, {
    type: 'tool_execution_start',
    toolCallId: call.id,
    toolName: call.name,
    args: call.arguments.slice(0, 2_000),
  });
  const outcome = await outcomeOf(call, context);
  const firstText = outcome.content.find((block) => block.type === 'text');
  context.events.record(context.run, {
    type: 'tool_execution_end',
    toolCallId: call.id,
    toolName: call.name,
    isError: outcome.isError,
    preview: firstText?.type === 'text' ? firstText.text.slice(0, PREVIEW_CHARS) : '',
  });
  return {
    role: 'toolResult',
    toolCallId: call.id,
    toolName: call.name,
    ...outcome,
    timestamp: workflowTime(),
  };
}

async function outcomeOf(call: ToolCall, context: FanOutContext): Promise<ToolOutcome> {
  const descriptor = context.tools.get(call.name);
  if (!descriptor) {
    const known = [...context.tools.keys()].sort().join(', ');
    return toolErrorOutcome(call.name, 'NotFound', `Tool not found: ${call.name}. Available tools: ${known}`);
  }
  const parsed = parseArguments(call.arguments);
  if (!parsed.ok) return toolErrorOutcome(call.name, 'InvalidArgs', parsed.error);
  try {
    return await toolActivitiesFor(descriptor).runTool({
      conversationId: context.conversationId,
      toolCallId: call.id,
      toolName: call.name,
      arguments: parsed.value,
      workspace: context.workspace,
    });
  } catch (error) {
    if (isCancellation(error)) throw error;
    return outcomeOfToolFailure(descriptor, error);
  }
}

type Parsed = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

/** The model's raw argument text, which may be malformed: that is the model's error to fix, not a crash. */
export function parseArguments(raw: string): Parsed {
  if (raw.trim() === '') return { ok: true, value: {} };
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    return {
      ok: false,
      error: `arguments are not valid JSON (${(error as Error).message}): ${raw.slice(0, 200)}`,
    };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, error: 'arguments must be a JSON object' };
  }
  return { ok: true, value: value as Record<string, unknown> };
}
