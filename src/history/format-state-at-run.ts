import { type Message, textOf, toolCallsOf } from '../shared/messages';
import { oneLine } from '../shared/one-line';
import type { StateAtRun } from './state-at-run';
import { printable } from '../shared/printable-text';

const LINE_CHARS = 200;

/**
 * `history ID --at N` as text: per model call, what the model was given and what it answered. What a
 * model, a tool, a file or a client wrote is shown without what a terminal acts on (see `printable`).
 */
export function formatStateAtRun(state: StateAtRun): string {
  const lines = [
    `Run ${state.run} of ${state.conversationId} (of ${state.runs}; execution ${state.runId}), ${state.modelCalls.length} model call${state.modelCalls.length === 1 ? '' : 's'}`,
    `  options: ${JSON.stringify(state.options ?? {})}`,
  ];
  if (state.approvalMode !== undefined) lines.push(`  approval mode: ${state.approvalMode}`);
  let shownPrompt: string | undefined;
  for (const call of state.modelCalls) {
    const usage = call.usage ? `, ${call.usage.inputTokens} in / ${call.usage.outputTokens} out tokens` : '';
    lines.push(
      '',
      `Model call ${call.iteration} (${call.model ?? 'the worker’s model'}, ${call.outcome}${usage}; execution ${call.execution}, event ${call.eventId})`,
      `  tools offered: ${call.toolNames.length ? call.toolNames.join(', ') : 'none'}`,
    );
    if (call.systemPrompt !== undefined) lines.push(...systemPromptLines(call.systemPrompt, shownPrompt));
    shownPrompt = call.systemPrompt;
    call.messages.forEach((message, index) => lines.push(`  [${index + 1}] ${messageLine(message)}`));
    lines.push(call.answer ? `  → ${messageLine(call.answer)}` : '  → no answer recorded');
  }
  lines.push('', state.approvals.length ? 'Approvals:' : 'Approvals: none asked for');
  for (const approval of state.approvals) {
    lines.push(
      `  ${approval.toolCallId}${approval.toolName ? ` (${approval.toolName})` : ''}: ${approval.decision}${approval.by ? ` by ${approval.by}` : ''}`,
    );
  }
  return printable(`${lines.join('\n')}\n`);
}

/**
 * `text` on one line (a carriage return a space, as other whitespace), made printable before it is
 * cut, so that a cut never leaves half an escape sequence to be shown.
 */
function shownLine(text: string, max: number): string {
  return oneLine(printable(text.replace(/\s+/g, ' ')), max);
}

/**
 * The system prompt in full the first time (it may hold a project's AGENTS.md), then only whether
 * it changed; its control characters dropped, since a file in a workspace may carry terminal escapes.
 */
function systemPromptLines(prompt: string, shown: string | undefined): string[] {
  if (prompt === shown) return ['  system: as above'];
  return [
    '  system:',
    ...printable(prompt)
      .split('\n')
      .map((line) => (line ? `    ${line}` : '')),
  ];
}

function messageLine(message: Message): string {
  switch (message.role) {
    case 'user':
      return `user: ${shownLine(message.content, LINE_CHARS)}${message.images?.length ? ` (+${message.images.length} image${message.images.length === 1 ? '' : 's'})` : ''}`;
    case 'assistant': {
      const calls = toolCallsOf(message).map((call) => `${call.name} ${shownLine(call.arguments, 80)}`);
      const text = textOf(message);
      return `assistant: ${[text ? shownLine(text, LINE_CHARS) : '', ...calls.map((call) => `[calls ${call}]`)].filter(Boolean).join(' ')}`;
    }
    case 'toolResult': {
      const text = message.content.map((part) => (part.type === 'text' ? part.text : '[image]')).join('');
      return `tool ${message.toolName}${message.isError ? ' (error)' : ''}: ${shownLine(text, LINE_CHARS)}`;
    }
  }
}
