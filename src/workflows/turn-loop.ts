import { ActivityFailure, ApplicationFailure, isCancellation } from '@temporalio/workflow';
import { EVENT_TEXT_PREVIEW_CHARS } from '../shared/constants';
import type { ConversationOptions } from '../shared/conversation-options';
import { type AssistantMessage, type UserMessage, textOf, toolCallsOf } from '../shared/messages';
import type { ToolDescriptor } from '../shared/tool-descriptor';
import { catalogActivities, modelActivities } from './activity-proxies';
import type { EventLog } from './event-log';
import { runToolCalls } from './tool-fan-out';
import type { Transcript } from './transcript';

export interface RunContext {
  conversationId: string;
  run: number;
  options: ConversationOptions;
  transcript: Transcript;
  events: EventLog;
  /** Tools the worker offers, looked up once per conversation. */
  tools: () => Promise<ReadonlyMap<string, ToolDescriptor>>;
}

/**
 * One run: the model is called, the tools it asks for run in parallel, their results go back to
 * the model, until it answers without tool calls or `maxToolIterations` model calls asked for tools.
 */
export async function runTurnLoop(context: RunContext, messages: UserMessage[]): Promise<void> {
  const { run, transcript, events, options } = context;
  const messageIds = messages.map((message) => message.messageId);
  transcript.append(...messages);
  events.record(run, { type: 'run_started', messageIds });
  const finish = (outcome: 'answered' | 'max_tool_iterations' | 'error', answer = '') =>
    events.record(run, { type: 'run_finished', messageIds, outcome, answer });
  /** An activity that failed for good ends the run, never the conversation; cancellation passes through. */
  const failRun = (what: string, error: unknown) => {
    if (isCancellation(error)) throw error;
    events.record(run, { type: 'error', message: `${what}: ${failureMessage(error)}` });
    finish('error');
  };

  let tools: ReadonlyMap<string, ToolDescriptor>;
  try {
    tools = await context.tools();
  } catch (error) {
    failRun("could not list the worker's tools", error);
    return;
  }
  const offered = options.tools ? options.tools.filter((name) => tools.has(name)) : [...tools.keys()];

  for (let iteration = 1; ; iteration++) {
    const delta = transcript.deltaForModel(context.conversationId);
    let reply: AssistantMessage;
    try {
      reply = await modelActivities.callModel({
        transcript: delta,
        toolNames: offered,
        model: options.model,
        systemPrompt: options.systemPrompt,
      });
    } catch (error) {
      failRun('model call failed', error);
      return;
    }
    transcript.markSent(delta);
    transcript.append(reply);
    const calls = toolCallsOf(reply);
    const text = textOf(reply);
    events.record(run, {
      type: 'model_response',
      iteration,
      text: text.slice(0, EVENT_TEXT_PREVIEW_CHARS),
      toolCalls: calls.map((call) => ({ id: call.id, name: call.name })),
    });
    if (calls.length === 0) {
      finish('answered', text);
      return;
    }

    const results = await runToolCalls(calls, {
      conversationId: context.conversationId,
      run,
      workspace: options.workspace,
      tools: new Map(offered.map((name) => [name, tools.get(name)!])),
      events,
    });
    transcript.append(...results);

    if (iteration >= options.maxToolIterations) {
      events.record(run, {
        type: 'error',
        message: `max tool iterations (${options.maxToolIterations}) exceeded`,
      });
      finish('max_tool_iterations');
      return;
    }
  }
}

export async function lookUpTools(): Promise<ReadonlyMap<string, ToolDescriptor>> {
  const descriptors = await catalogActivities.listTools();
  return new Map(descriptors.map((descriptor) => [descriptor.name, descriptor]));
}

function failureMessage(error: unknown): string {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  if (cause instanceof ApplicationFailure) return cause.message;
  if (cause instanceof Error) return cause.message;
  return String(cause);
}
