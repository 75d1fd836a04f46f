import type { PayloadConverter } from '@temporalio/common';
import type { ImageContent } from '../shared/content';
import {
  type AssistantMessage,
  type Message,
  type UserMessage,
  textOf,
  toolCallsOf,
} from '../shared/messages';
import { type RecordedToolCall, canonicalArguments } from '../shared/rerun';
import type { ExecutionHistory } from './build-timeline';
import { type StateAtRun, stateAtRun } from './state-at-run';

/** A tool call as a turn report shows it. */
export interface ToolCallShown {
  name: string;
  /** Canonical (keys sorted), so two reports compare. */
  arguments: string;
}

/** What one run of a conversation was asked and answered, as a rerun compares it. */
export interface RunRecord {
  run: number;
  /** The user messages the run took, in order. */
  messages: Array<{ text: string; sender?: string; images?: ImageContent[] }>;
  /** The text of the run's last answer; absent when the run did not end with one. */
  answer?: string;
  toolCalls: ToolCallShown[];
  tokens: { input: number; output: number };
}

/** A conversation read for a rerun: its runs from `fromRun`, the options then, and every tool result. */
export interface RerunPlan {
  conversationId: string;
  fromRun: number;
  runs: RunRecord[];
  /** The options the execution holding `fromRun` was started with. */
  options: unknown;
  recorded: RecordedToolCall[];
}

/** Reads runs `fromRun` to the last from a conversation's executions, payloads decoded. Pure. */
export function rerunPlan(
  conversationId: string,
  executions: ExecutionHistory[],
  fromRun: number,
  converter: PayloadConverter,
): RerunPlan {
  const first = stateAtRun(conversationId, executions, fromRun, converter);
  const runs: RunRecord[] = [];
  const recorded: RecordedToolCall[] = [];
  for (let run = fromRun; run <= first.runs; run++) {
    const state = run === fromRun ? first : stateAtRun(conversationId, executions, run, converter);
    runs.push(runRecord(state));
    recorded.push(...recordedCalls(state));
  }
  return { conversationId, fromRun, runs, options: first.options, recorded };
}

/** What a run was asked and answered, from what its model calls were given and answered. */
export function runRecord(state: StateAtRun): RunRecord {
  const firstCall = state.modelCalls[0];
  const lastAnswer = state.modelCalls.at(-1)?.answer;
  const answers = state.modelCalls.flatMap((call) =>
    call.answer?.role === 'assistant' ? [call.answer] : [],
  );
  const tokens = { input: 0, output: 0 };
  for (const call of state.modelCalls) {
    tokens.input += call.usage?.inputTokens ?? 0;
    tokens.output += call.usage?.outputTokens ?? 0;
  }
  return {
    run: state.run,
    messages: trailingUserMessages(firstCall?.messages ?? []).map((message) => ({
      text: message.content,
      ...(message.sender !== undefined ? { sender: message.sender } : {}),
      ...(message.images?.length ? { images: message.images } : {}),
    })),
    ...(lastAnswer?.role === 'assistant' && toolCallsOf(lastAnswer).length === 0
      ? { answer: textOf(lastAnswer) }
      : {}),
    toolCalls: answers.flatMap((answer) =>
      toolCallsOf(answer).map((call) => ({ name: call.name, arguments: canonicalArguments(call.arguments) })),
    ),
    tokens,
  };
}

/** The messages a run began with: the user messages after the transcript's last other message. */
function trailingUserMessages(messages: Message[]): UserMessage[] {
  const taken: UserMessage[] = [];
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role !== 'user') break;
    taken.unshift(message);
  }
  return taken;
}

/** Each tool call of the run with the result the model read next (calls without one are left out). */
function recordedCalls(state: StateAtRun): RecordedToolCall[] {
  const recorded: RecordedToolCall[] = [];
  state.modelCalls.forEach((call, index) => {
    const answer = call.answer;
    const next = state.modelCalls[index + 1];
    if (answer?.role !== 'assistant' || !next) return;
    for (const toolCall of toolCallsOf(answer as AssistantMessage)) {
      const result = next.messages.find(
        (message) => message.role === 'toolResult' && message.toolCallId === toolCall.id,
      );
      if (result?.role !== 'toolResult') continue;
      recorded.push({
        run: state.run,
        toolName: toolCall.name,
        arguments: canonicalArguments(toolCall.arguments),
        content: result.content,
        isError: result.isError,
        ...(result.status !== undefined ? { status: result.status } : {}),
        ...(result.errorKind !== undefined ? { errorKind: result.errorKind } : {}),
        ...(result.blockedBy !== undefined ? { blockedBy: result.blockedBy } : {}),
        ...(result.reason !== undefined ? { reason: result.reason } : {}),
      });
    }
  });
  return recorded;
}
