import { toolCallView } from '../acp/tool-call-view';
import { type SafeHtml, html } from './html';

/** Where the view's paths are resolved from, so they can be shown relative again. */
const ROOT = '/';

/**
 * What a call that changes files would change, as an editor shows it: for `write`, `edit` and
 * `apply_patch`, each file with the text it takes out and the text it puts in (the same view the
 * ACP agent sends editors). Empty for other tools; the whole arguments are shown beside it.
 */
export function changeDiff(toolName: string, argumentsText: string): SafeHtml {
  let args: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(argumentsText);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return html``;
    args = parsed as Record<string, unknown>;
  } catch {
    return html``;
  }
  const { diffs } = toolCallView(toolName, args, ROOT);
  return html`${diffs.map(
    (diff) =>
      html`<div class="diff">
        <p class="diff-path">
          ${diff.path.slice(ROOT.length)}${diff.oldText === null ? ' (new file, or its old text unknown)' : ''}
        </p>
        <pre>${lines(diff.oldText ?? '', '-', 'removed')}${lines(diff.newText, '+', 'added')}</pre>
      </div>`,
  )}`;
}

function lines(text: string, sign: string, kind: string): SafeHtml[] {
  if (!text) return [];
  return text
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => html`<span class="${kind}">${sign} ${line}</span> `);
}
