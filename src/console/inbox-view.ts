import type { PendingApproval } from '../shared/approvals';
import { type Message, textOf } from '../shared/messages';
import { changeDiff } from './change-diff';
import { decisionForms } from './decision-forms';
import { type SafeHtml, html } from './html';
import { modelMarkdown } from './model-markdown';

/** One pending decision, with the conversation it waits in. */
export interface InboxItem {
  conversationId: string;
  agentId: string;
  approval: PendingApproval;
  /** The last user message and the model's last words before the call, for context. */
  context: Message[];
}

/** The inbox's live region: every pending decision, oldest first. */
export function inboxRegion(items: readonly InboxItem[], csrf: string): SafeHtml {
  if (items.length === 0) return html`<p class="empty">Nothing waits for a decision.</p>`;
  const sorted = [...items].sort((a, b) => a.approval.requestedAt - b.approval.requestedAt);
  return html`${sorted.map((item) => inboxItem(item, csrf))}`;
}

// Times are absolute, so the region changes only when its items do (a live refresh replaces it).
export function inboxItem(item: InboxItem, csrf: string): SafeHtml {
  const { approval, conversationId } = item;
  const link = `/console/conversations/${encodeURIComponent(conversationId)}`;
  return html`<section
    class="item"
    data-tool-call-id="${approval.toolCallId}"
    data-conversation-id="${conversationId}"
  >
    <h3>
      ${approval.budget ? 'Budget pause' : approval.toolName} in <a href="${link}">${conversationId}</a>
    </h3>
    <p>
      agent ${item.agentId} · run ${approval.run} · risk
      <span class="risk-${approval.risk}">${approval.risk}</span> · asked at
      ${clock(approval.requestedAt)}${
        approval.expiresAt !== undefined ? html` · rejected by itself at ${clock(approval.expiresAt)}` : ''
      }
    </p>
    ${approval.budget ? budgetLine(approval) : argumentsBlock(approval)} ${contextBlock(item.context)}
    ${decisionForms(conversationId, approval, csrf, 'inbox')}
  </section>`;
}

function argumentsBlock(approval: PendingApproval): SafeHtml {
  return html`${changeDiff(approval.toolName, approval.arguments)}
    <pre class="arguments">${prettyJson(approval.arguments)}</pre>
    ${
      approval.argumentsTruncated
        ? html`<p>
            The arguments are ${approval.argumentsLength} characters; shown cut (SHA-256
            ${approval.argumentsSha256}).
          </p>`
        : ''
    }`;
}

function budgetLine(approval: PendingApproval): SafeHtml {
  const pause = approval.budget!;
  return html`<p>
    The run reached its ${pause.kind} budget: ${pause.used} used of ${pause.limit}. Raising adds
    ${pause.defaultRaise}.
  </p>`;
}

function contextBlock(context: readonly Message[]): SafeHtml {
  const lines = context.flatMap((message) => {
    if (message.role === 'user')
      return [
        html`<div class="message">
          <div class="role">user</div>
          <pre>${message.content}</pre>
        </div>`,
      ];
    if (message.role === 'assistant' && textOf(message).trim())
      return [
        html`<div class="message">
          <div class="role">model</div>
          ${modelMarkdown(textOf(message))}
        </div>`,
      ];
    return [];
  });
  return lines.length
    ? html`<details>
        <summary>The turn so far</summary>
        ${lines}
      </details>`
    : html``;
}

/** Arguments as indented JSON when they are JSON; as sent otherwise. */
export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function clock(epochMs: number): string {
  return `${new Date(epochMs).toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}
