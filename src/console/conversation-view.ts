import type { PendingApproval } from '../shared/approvals';
import type { Message } from '../shared/messages';
import { decisionForms } from './decision-forms';
import { type SafeHtml, html } from './html';
import { prettyJson } from './inbox-view';
import { modelMarkdown } from './model-markdown';

/** What the conversation page shows; read with the token's rights. */
export interface ConversationPageData {
  conversationId: string;
  agentId: string;
  status: string;
  runs: number;
  transcript: readonly Message[];
  /** Where the transcript shown starts (earlier messages are left out of the page). */
  from: number;
  pending: readonly PendingApproval[];
}

/** The live region: pending decisions first, then the transcript. */
export function conversationRegion(data: ConversationPageData, csrf: string): SafeHtml {
  return html`<p>agent ${data.agentId} · ${data.status} · ${data.runs} runs</p>
    ${data.pending.map(
      (approval) =>
        html`<section class="item" data-tool-call-id="${approval.toolCallId}">
          <h3>
            ${approval.budget ? 'Budget pause' : approval.toolName} waits for a decision (risk
            ${approval.risk})
          </h3>
          <pre class="arguments">${prettyJson(approval.arguments)}</pre>
          ${decisionForms(data.conversationId, approval, csrf)}
        </section>`,
    )}
    ${data.from > 0 ? html`<p>${data.from} earlier messages are not shown.</p>` : ''}
    <div class="transcript">${data.transcript.map(messageBlock)}</div>`;
}

/** The conversation's workflow in the Temporal Web UI, when the gateway knows where that is. */
export function webUiLink(conversationId: string, webUi?: { baseUrl: string; namespace: string }): SafeHtml {
  if (!webUi) return html``;
  const href = `${webUi.baseUrl}/namespaces/${encodeURIComponent(webUi.namespace)}/workflows/${encodeURIComponent(
    conversationId,
  )}`;
  return html`<p>
    <a href="${href}" target="_blank" rel="noopener noreferrer">Its workflow in the Temporal Web UI</a>
  </p>`;
}

/**
 * Where the page's script shows the run in progress (the model's text as it streams, a tool's
 * progress), from the conversation's run stream; hidden until something streams, and without script.
 */
export function runInProgress(conversationId: string): SafeHtml {
  const stream = `/console/live/conversations/${encodeURIComponent(conversationId)}/run`;
  return html`<section id="run-live" class="run-live" data-stream="${stream}" hidden>
    <h2>Run in progress</h2>
    <pre class="run-text"></pre>
    <p class="run-progress"></p>
  </section>`;
}

/** Where a person opens a past run from inside (what its model calls were given) and forks there. */
export function runLookup(conversationId: string, runs: number): SafeHtml {
  if (runs < 1) return html``;
  return html`<form method="get" action="/console/conversations/${encodeURIComponent(conversationId)}/run">
    <label
      >Run <input type="number" name="n" min="1" max="${String(runs)}" value="${String(runs)}" required
    /></label>
    <button type="submit">Look inside (what each model call was given; fork there)</button>
  </form>`;
}

/** Steer, abort and end: forms that post with the session's check. */
export function controlForms(conversationId: string, csrf: string): SafeHtml {
  const base = `/console/conversations/${encodeURIComponent(conversationId)}`;
  const check = html`<input type="hidden" name="csrf" value="${csrf}" />`;
  return html`<div class="decide">
    <form method="post" action="${base}/steer">
      ${check}<input type="text" name="text" placeholder="Steer the run" required maxlength="20000" /><button
        type="submit"
      >
        Steer
      </button>
    </form>
    <form method="post" action="${base}/abort">${check}<button type="submit">Abort the run</button></form>
    <form method="post" action="${base}/end">
      ${check}<button type="submit">End the conversation</button>
    </form>
  </div>`;
}

/** One message of a transcript: user text as text, the model's as sanitized markdown, tool output as text. */
export function messageBlock(message: Message): SafeHtml {
  switch (message.role) {
    case 'user':
      return html`<div class="message user">
        <div class="role">user${message.sender ? ` (${message.sender})` : ''}</div>
        <pre>${message.content}</pre>
        ${message.images?.length ? html`<p>${message.images.length} images</p>` : ''}
      </div>`;
    case 'assistant':
      return html`<div class="message assistant">
        <div class="role">model</div>
        ${message.content.map((block) =>
          block.type === 'text'
            ? modelMarkdown(block.text)
            : block.type === 'thinking'
              ? html`<details class="thinking">
                  <summary>thinking</summary>
                  <pre>${block.thinking}</pre>
                </details>`
              : html`<div class="tool-call">
                  calls <strong>${block.name}</strong>
                  <pre>${prettyJson(block.arguments)}</pre>
                </div>`,
        )}
        ${message.stopReason === 'refusal' ? refusalBlock(message.refusal) : ''}
      </div>`;
    case 'toolResult':
      return html`<div class="message tool-result">
        <div class="role">
          ${message.toolName}
          ${message.isError ? 'failed' : 'answered'}${message.aborted ? ' (interrupted)' : ''}
        </div>
        ${message.content.map((block) =>
          block.type === 'text' ? html`<pre>${block.text}</pre>` : html`<p>[${block.type}]</p>`,
        )}
      </div>`;
  }
}

/** A refused answer: the provider's words as text, set apart from the model's. */
function refusalBlock(refusal: string | undefined): SafeHtml {
  return html`<p class="refusal">
    The model's provider refused to answer${refusal ? html`: <q>${refusal}</q>` : html` (it gave no reason).`}
  </p>`;
}
