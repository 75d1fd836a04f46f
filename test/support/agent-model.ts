import { SUMMARY_SYSTEM_PROMPT } from '../../src/shared/compaction';
import type { ChatRequest, ScriptedReply } from './scripted-model';

/**
 * A model for long conversations: every user message is answered with one `bulk` tool call of
 * `toolBytes`, then a text naming the user message it answers; summary requests get a summary.
 * Records what it was asked, so tests can check nothing was lost.
 */
export class AgentModel {
  readonly summaryRequests: ChatRequest[] = [];
  readonly answered: string[] = [];
  readonly requests: ChatRequest[] = [];

  constructor(private readonly toolBytes = 4_000) {}

  readonly reply = (request: ChatRequest): ScriptedReply => {
    this.requests.push(request);
    if (request.messages[0]?.role === 'system' && request.messages[0].content === SUMMARY_SYSTEM_PROMPT) {
      this.summaryRequests.push(request);
      return { text: `summary ${this.summaryRequests.length}` };
    }
    const last = request.messages.at(-1)!;
    if (last.role === 'user') {
      return { toolCalls: [{ name: 'bulk', arguments: { bytes: this.toolBytes, seed: 'data ' } }] };
    }
    const question = [...request.messages].reverse().find((message) => message.role === 'user');
    this.answered.push(question?.content ?? '');
    return { text: `answered: ${question?.content ?? ''}` };
  };

  /** As many script steps as `count` requests need. */
  steps(count: number) {
    return Array.from({ length: count }, () => this.reply);
  }
}

/** Every tool message directly follows the assistant message that asked for it. */
export function toolCallsPaired(request: ChatRequest): boolean {
  let asked = new Set<string>();
  for (const message of request.messages) {
    if (message.role === 'assistant') asked = new Set((message.tool_calls ?? []).map((call) => call.id));
    else if (message.role === 'tool') {
      if (!message.tool_call_id || !asked.has(message.tool_call_id)) return false;
    } else asked = new Set();
  }
  return true;
}
