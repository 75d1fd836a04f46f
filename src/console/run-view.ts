import type { ModelCallAtRun, StateAtRun } from '../history/state-at-run';
import { messageBlock } from './conversation-view';
import { type SafeHtml, html } from './html';

/**
 * A past run from inside, as `history --at` shows it: what each model call was given (the
 * transcript as sent, the system prompt, the tools offered) and what it answered, with the
 * options and decisions in force; and the form that forks the conversation at this run.
 */
export function runView(state: StateAtRun, csrf: string): SafeHtml {
  const base = `/console/conversations/${encodeURIComponent(state.conversationId)}`;
  return html`<p>
      Run ${state.run} of ${state.runs} · ${state.modelCalls.length} model
      ${state.modelCalls.length === 1 ? 'call' : 'calls'} · execution
      ${state.runId}${state.approvalMode !== undefined ? html` · approval mode ${state.approvalMode}` : ''}
    </p>
    <p><a href="${base}">Back to the conversation</a></p>
    <form method="post" action="${base}/fork" class="decide">
      <input type="hidden" name="csrf" value="${csrf}" /><input
        type="hidden"
        name="run"
        value="${String(state.run)}"
      /><button type="submit">Fork at run ${state.run}</button>
      (a new conversation with this transcript up to the end of run ${state.run}, waiting for its next
      message)
    </form>
    <details>
      <summary>Options</summary>
      <pre>${JSON.stringify(state.options ?? {}, null, 2)}</pre>
    </details>
    ${state.modelCalls.map(modelCallBlock)}
    <h2>Decisions</h2>
    ${
      state.approvals.length
        ? html`<ul>
            ${state.approvals.map(
              (approval) =>
                html`<li>
                  ${approval.toolName ?? approval.toolCallId}:
                  ${approval.decision}${approval.by ? ` by ${approval.by}` : ''}
                </li>`,
            )}
          </ul>`
        : html`<p>None asked for.</p>`
    }`;
}

function modelCallBlock(call: ModelCallAtRun): SafeHtml {
  const usage = call.usage ? ` · ${call.usage.inputTokens} in / ${call.usage.outputTokens} out tokens` : '';
  return html`<section class="item model-call">
    <h2>Model call ${call.iteration}</h2>
    <p>
      ${call.model ?? "the worker's model"} · ${call.outcome}${usage} · tools offered:
      ${call.toolNames.length ? call.toolNames.join(', ') : 'none'}
    </p>
    ${
      call.systemPrompt !== undefined
        ? html`<details>
            <summary>System prompt</summary>
            <pre>${call.systemPrompt}</pre>
          </details>`
        : ''
    }
    <details>
      <summary>Given ${call.messages.length} messages</summary>
      <div class="transcript">${call.messages.map(messageBlock)}</div>
    </details>
    <h3>Answered</h3>
    <div class="transcript">
      ${call.answer ? messageBlock(call.answer) : html`<p>No answer recorded.</p>`}
    </div>
  </section>`;
}
