import { ApplicationFailure } from '@temporalio/common';
import type { AgentActivities } from '../../src/activities/create-activities';
import type { AssistantMessage, Message, ToolResultMessage } from '../../src/shared/messages';
import type { ModelCallInput } from '../../src/shared/model-call';
import type { ToolDescriptorInput } from '../../src/shared/tool-descriptor';
import { type ToolOutcome, okOutcome } from '../../src/shared/tool-outcome';
import type { ToolRunInput } from '../../src/shared/tool-run';

/** One reply of the scripted model: text, tool calls, or both. Arguments are serialised as JSON. */
export interface ScriptedAnswer {
  text?: string;
  toolCalls?: Array<{ id: string; name: string; arguments: Record<string, unknown> }>;
}

/** A step of the script: a fixed answer, or one made from what the model was sent. */
export type ModelStep = ScriptedAnswer | ((input: ModelCallInput) => ScriptedAnswer);

/**
 * The `callModel` activity, answering by script. Running out of steps fails the call for good (the
 * run ends with an error event) and is remembered, so a test that asserts `unanswered` says so.
 */
export class ScriptedModel {
  /** What each call was sent, in order. */
  readonly calls: ModelCallInput[] = [];
  /** Calls made after the script ran out. */
  unanswered = 0;
  private next = 0;

  constructor(private readonly steps: readonly ModelStep[]) {}

  readonly callModel = async (input: ModelCallInput): Promise<AssistantMessage> => {
    this.calls.push(input);
    const step = this.steps[this.next++];
    if (step === undefined) {
      this.unanswered++;
      throw ApplicationFailure.nonRetryable(
        `the scripted model ran out of replies (call ${this.calls.length})`,
      );
    }
    return assistantMessage(typeof step === 'function' ? step(input) : step);
  };

  /** The messages the model was sent (each call gets what is new since the one before). */
  get told(): Message[] {
    return this.calls.flatMap((call) => call.transcript.newMessages);
  }

  /** The tool results the model was sent, by tool call id. */
  toolResult(toolCallId: string): ToolResultMessage | undefined {
    return this.told.find(
      (message): message is ToolResultMessage =>
        message.role === 'toolResult' && message.toolCallId === toolCallId,
    );
  }
}

function assistantMessage({ text, toolCalls = [] }: ScriptedAnswer): AssistantMessage {
  return {
    role: 'assistant',
    content: [
      ...(text !== undefined ? [{ type: 'text' as const, text }] : []),
      ...toolCalls.map((call) => ({
        type: 'toolCall' as const,
        id: call.id,
        name: call.name,
        arguments: JSON.stringify(call.arguments),
      })),
    ],
    stopReason: toolCalls.length > 0 ? 'toolUse' : 'stop',
    model: 'scripted-model',
    timestamp: Date.now(),
  };
}

/** A worker tool's descriptor: a command-like tool of `risk` (medium and high ask for approval). */
export function toolDescriptor(
  name: string,
  overrides: Partial<ToolDescriptorInput> = {},
): ToolDescriptorInput {
  return {
    name,
    label: name,
    category: 'commands',
    idempotent: false,
    startToCloseTimeoutMs: 300_000,
    heartbeatTimeoutMs: 30_000,
    retry: { maximumAttempts: 1, initialIntervalMs: 1_000, backoffCoefficient: 2, maximumIntervalMs: 10_000 },
    risk: 'low',
    ...overrides,
  };
}

/** A tool's text result, as `runTool` returns it. */
export function textOutcome(text: string): ToolOutcome {
  return okOutcome({ content: [{ type: 'text', text }] });
}

export interface MockedActivityOptions {
  model: ScriptedModel;
  /** What `listTools` returns. */
  tools?: ToolDescriptorInput[];
  /** Runs a tool call; by default every call answers `ok`. */
  runTool?: (input: ToolRunInput) => Promise<ToolOutcome> | ToolOutcome;
}

/** The mocked activities and what they were asked to do. */
export interface MockedActivities {
  activities: AgentActivities;
  /** Every tool call the workflow scheduled, in order. */
  toolRuns: ToolRunInput[];
}

/**
 * Every activity the conversation workflow schedules, with the worker's names and types: the model
 * by script, the tools as given, admission admitting with no floors. Activities no test here
 * expects (summaries, webhooks, RAP notices) fail for good, naming themselves.
 */
export function mockedActivities(options: MockedActivityOptions): MockedActivities {
  const toolRuns: ToolRunInput[] = [];
  const unexpected = (name: string) => () =>
    Promise.reject(ApplicationFailure.nonRetryable(`the mocked worker does not expect ${name}`));
  const runTool = async (input: ToolRunInput) => {
    toolRuns.push(input);
    return options.runTool ? options.runTool(input) : textOutcome('ok');
  };
  const activities: AgentActivities = {
    callModel: options.model.callModel,
    runTool,
    runLocalTool: async (input) => ({ ...(await runTool(input)), toolCallId: input.toolCallId }),
    listTools: async () => ({ tools: options.tools ?? [], warnings: [] }),
    admitConversation: async () => ({ admitted: true, approvalFloor: {} }),
    composeSystemPrompt: async (request) => `mocked system prompt for ${request.tools.length} tools`,
    summarizeTranscript: unexpected('summarizeTranscript'),
    deliverWebhook: unexpected('deliverWebhook'),
    deliverA2APush: unexpected('deliverA2APush'),
    sendRapNotice: unexpected('sendRapNotice'),
  };
  return { activities, toolRuns };
}
