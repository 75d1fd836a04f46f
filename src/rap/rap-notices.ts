import { Context } from '@temporalio/activity';
import type { RapNotice } from '../shared/rap';

/**
 * The `sendRapNotice` activity: close_thread and cancel_tool_call go to every configured tool
 * server, best effort and never retried (rap spec); a failure is logged. A user's choice goes to the
 * tool's `response_url` and fails the activity when not accepted, so the conversation can keep it pending.
 */
export function createSendRapNotice(toolsets: readonly string[], fetchImpl: typeof fetch = fetch) {
  const post = (url: string, body: unknown) =>
    fetchImpl(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
  return async function sendRapNotice(notice: RapNotice): Promise<void> {
    if (notice.kind === 'user_choice_response') {
      const response = await post(notice.responseUrl, { id: notice.toolCallId, selected: notice.selected });
      await response.body?.cancel();
      if (response.status !== 200) throw new Error(`${notice.responseUrl} answered ${response.status}`);
      return;
    }
    const [pathName, body] =
      notice.kind === 'close_thread'
        ? ['/close_thread', { thread_id: notice.conversationId }]
        : ['/cancel_tool_call', { thread_id: notice.conversationId, tool_call_id: notice.toolCallId }];
    await Promise.all(
      toolsets.map(async (base) => {
        try {
          const response = await post(base + pathName, body);
          await response.body?.cancel();
        } catch (error) {
          Context.current().log.warn(`RAP ${pathName} to ${base} failed: ${(error as Error).message}`);
        }
      }),
    );
  };
}
