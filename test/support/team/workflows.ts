// A team's own workflow, as it would be written in their repository: an agent triages a ticket (a
// step that may wait for a person's approval), then the team's own activity files the result.
import { proxyActivities } from '@temporalio/workflow';
import { runAgent } from '../../../src/workflows/public-api';
import type { TeamActivities } from './activities';

const { fileTriage } = proxyActivities<TeamActivities>({ startToCloseTimeout: '10 seconds' });

export interface TriageResult {
  conversationId: string;
  outcome: string | undefined;
  filed: string;
}

export async function triageTicket(ticket: string, conversationId?: string): Promise<TriageResult> {
  const step = await runAgent({
    prompt: `Triage this ticket and label it: ${ticket}`,
    ...(conversationId ? { conversationId } : {}),
    options: { allow: ['label_ticket'], approval: { tools: { label_ticket: 'ask' } } },
  });
  const filed = await fileTriage(ticket, step.answer ?? '(no answer)');
  return { conversationId: step.conversationId, outcome: step.outcome, filed };
}
