import type { PendingApproval } from '../shared/approvals';
import type { BudgetPause } from '../shared/budget';
import { type SafeHtml, html } from './html';

/**
 * The one-click decisions on a pending approval, as forms that post without the script: allow
 * once, allow always (not offered for a budget pause, which only a raise or a reject answers),
 * reject with a reason the model reads. Each names the arguments' hash it was shown. A budget
 * pause is raised by the amount its form holds (the conversation's first budget for that part,
 * unless the person changes it); an agent's daily budget is raised by no decision, only rejected.
 */
export function decisionForms(
  conversationId: string,
  approval: PendingApproval,
  csrf: string,
  back?: 'inbox',
): SafeHtml {
  const action = `/console/conversations/${encodeURIComponent(conversationId)}/approvals/${encodeURIComponent(
    approval.toolCallId,
  )}`;
  const hidden = html`<input type="hidden" name="csrf" value="${csrf}" /><input
      type="hidden"
      name="argumentsSha256"
      value="${approval.argumentsSha256}"
    />${back ? html`<input type="hidden" name="back" value="${back}" />` : ''}`;
  const pause = approval.budget;
  return html`<div class="decide">
    ${
      pause?.kind === 'dailyTokens'
        ? ''
        : html`<form method="post" action="${action}">
            ${hidden}<input
              type="hidden"
              name="decision"
              value="allow_once"
            />${pause ? raiseInput(pause) : ''}<button type="submit" data-decision="allow_once">
              ${pause ? 'Raise the budget' : 'Allow once'}
            </button>
          </form>`
    }
    ${
      approval.budget
        ? ''
        : html`<form method="post" action="${action}">
            ${hidden}<input type="hidden" name="decision" value="allow_always" /><button
              type="submit"
              data-decision="allow_always"
            >
              Allow always (${approval.scope})
            </button>
          </form>`
    }
    <form method="post" action="${action}">
      ${hidden}<input type="hidden" name="decision" value="reject_once" /><input
        type="text"
        name="reason"
        placeholder="Why (the model reads it)"
        maxlength="2000"
      /><button type="submit" data-decision="reject_once">Reject</button>
    </form>
  </div>`;
}

/** How much to raise the paused part by, in its own unit. */
function raiseInput(pause: BudgetPause): SafeHtml {
  const unit = pause.kind === 'tokens' ? 'tokens' : pause.kind === 'toolCalls' ? 'tool calls' : 'ms';
  return html`<input type="hidden" name="raiseKind" value="${pause.kind}" /><label
      >by
      <input type="number" name="raise" min="1" step="1" required value="${String(pause.defaultRaise)}" />
      ${unit}</label
    >`;
}
