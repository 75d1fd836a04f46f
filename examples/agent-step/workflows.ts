// Your workflow, with an agent as one of its steps: the agent drafts a reply to a support ticket
// (a child conversation: approvals, steer and abort reach it by its id), then your own activity
// sends it. Workflow code: import only workflow-safe modules, such as `durable-agent/workflow`.
import { proxyActivities } from '@temporalio/workflow';
import { runAgent } from 'durable-agent/workflow';
import type { SupportActivities } from './activities';

const { sendReply } = proxyActivities<SupportActivities>({ startToCloseTimeout: '1 minute' });

export async function answerTicket(ticket: { id: string; text: string }): Promise<string> {
  const draft = await runAgent({
    prompt: `Draft a short, friendly reply to this support ticket:\n${ticket.text}`,
    conversationId: `ticket-${ticket.id}-draft`,
    options: { allow: [], budget: { tokens: 50_000 } },
    timeoutMs: 10 * 60_000,
  });
  if (draft.outcome !== 'answered' || !draft.answer) return `not sent: the agent ${draft.outcome}`;
  return sendReply(ticket.id, draft.answer);
}
