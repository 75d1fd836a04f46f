import type { ConversationOverview, OverviewFilter } from '../client/conversation-overview';
import type { ConversationSpent } from '../shared/conversation-spent';
import { type SafeHtml, html } from './html';

const STATUSES = ['running', 'awaiting_approval', 'idle', 'ended'] as const;

/**
 * The filter form: status, agent, id prefix (a GET form, so a filtered list has its own address);
 * the inbox's has no status (all it lists await a decision).
 */
export function conversationFilters(
  filter: OverviewFilter & { idPrefix?: string },
  page: '/console' | '/console/inbox' = '/console',
): SafeHtml {
  return html`<form method="get" action="${page}" class="filters">
    ${page === '/console' ? statusFilter(filter) : ''}
    <label>Agent <input type="text" name="agent" value="${filter.agentId ?? ''}" /></label>
    <label>Id starts with <input type="text" name="prefix" value="${filter.idPrefix ?? ''}" /></label>
    <button type="submit">Filter</button>
  </form>`;
}

function statusFilter(filter: OverviewFilter): SafeHtml {
  return html`<label
    >Status
    <select name="status">
      <option value="">any</option>
      ${STATUSES.map(
        (status) =>
          html`<option value="${status}" ${filter.status === status ? html` selected` : ''}>
            ${status}
          </option>`,
      )}
    </select></label
  >`;
}

/** The list's live region. */
export function conversationsRegion(conversations: readonly ConversationOverview[]): SafeHtml {
  if (conversations.length === 0) return html`<p class="empty">No conversation matches.</p>`;
  return html`<table>
    <thead>
      <tr>
        <th>conversation</th>
        <th>status</th>
        <th>agent</th>
        <th>last activity</th>
        <th>started</th>
        <th class="number">runs</th>
        <th class="number">tokens</th>
        <th class="number">tool calls</th>
      </tr>
    </thead>
    <tbody>
      ${conversations.map(
        (conversation) =>
          html`<tr data-conversation-id="${conversation.conversationId}">
            <td>
              <a href="/console/conversations/${encodeURIComponent(conversation.conversationId)}"
                >${conversation.conversationId}</a
              >
            </td>
            <td>${statusWords(conversation)}</td>
            <td>${conversation.agentId}</td>
            <td>
              ${(conversation.lastActivity ?? conversation.closeTime ?? conversation.startTime).toISOString()}
            </td>
            <td>${conversation.startTime.toISOString()}</td>
            ${spentCells(conversation.spent)}
          </tr>`,
      )}
    </tbody>
  </table>`;
}

function statusWords(conversation: ConversationOverview): string {
  switch (conversation.status) {
    case 'awaiting_approval':
      return 'awaiting a decision';
    case 'ended':
      return `ended (${conversation.executionStatus.toLowerCase().replace(/_/g, ' ')})`;
    default:
      return conversation.status;
  }
}

/** Runs, tokens and tool calls as of the last finished run; dashes before one. */
function spentCells(spent: ConversationSpent | undefined) {
  const cell = (count: number | undefined) =>
    html`<td class="number">${count === undefined ? '–' : count.toLocaleString('en-US')}</td>`;
  return [cell(spent?.runs), cell(spent?.tokens), cell(spent?.toolCalls)];
}
