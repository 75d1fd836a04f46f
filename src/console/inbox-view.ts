import { policySummary } from '../shared/pending-policy';
import type { PendingApproval } from '../shared/approvals';
import { budgetKindWords } from '../shared/budget';
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
  /** Who may decide it: the names of the tokens with `approve` on its conversation (and agent). */
  mayDecide: string[];
}

/** What the inbox shows: the decisions of the conversations that have waited longest. */
export interface InboxPage {
  items: InboxItem[];
  /** Conversations waiting for a decision, all of them. */
  waitingConversations: number;
  /** Those whose decisions `items` holds. */
  shownConversations: number;
}

/** The inbox's live region: the pending decisions shown, oldest first, and how many more wait. */
export function inboxRegion(page: InboxPage, csrf: string): SafeHtml {
  if (page.items.length === 0 && page.waitingConversations === 0)
    return html`<p class="empty">Nothing waits for a decision.</p>`;
  const sorted = [...page.items].sort((a, b) => a.approval.requestedAt - b.approval.requestedAt);
  const more = page.waitingConversations - page.shownConversations;
  return html`<p class="count">
      ${page.waitingConversations}
      ${page.waitingConversations === 1 ? 'conversation waits' : 'conversations wait'} for a
      decision${
        more > 0
          ? html`; shown are the ${page.shownConversations} that have waited longest (narrow the inbox by
            agent or id prefix to reach the ${more} others)`
          : ''
      }.
    </p>
    ${sorted.map((item) => inboxItem(item, csrf))}`;
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
      · asked of ${item.mayDecide.length ? item.mayDecide.join(', ') : 'no token of the gateway'}
    </p>
    ${approval.policy ? html`<p class="policy">${policySummary(approval.policy)}</p>` : ''}
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
    The run reached its ${budgetKindWords(pause.kind)}: ${pause.used} used of
    ${pause.limit}.${
      pause.kind === 'dailyTokens'
        ? ' No decision raises it; the run goes on by itself the next UTC day, unless rejected now.'
        : ''
    }
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
