import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { signDecision } from '../client/sign-decision';
import type { ApprovalDecision } from '../shared/approvals';
import { BUDGET_KINDS, type BudgetKind } from '../shared/budget';
import type { GatewayAction } from '../gateway/gateway-api';
import { GatewayAuthError } from '../gateway/gateway-tokens';
import { type ConsoleKit, type SignedIn, idOf, signedIn } from './console-kit';
import { checkCsrf } from './console-security';

const DecisionFormSchema = z.object({
  decision: z.enum(['allow_once', 'allow_always', 'reject_once']),
  argumentsSha256: z.string().regex(/^[0-9a-f]{64}$/),
  reason: z.string().max(2_000).optional(),
  /** On a budget pause: the part paused, and how much to raise it by. */
  raiseKind: z.enum(BUDGET_KINDS as [BudgetKind, ...BudgetKind[]]).optional(),
  raise: z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
});

/**
 * Decisions, steer, abort and end: each checked against the session (its check value, the same
 * origin), then against the token's action on the conversation, then done as the token's
 * identity; the person is sent back where they decided.
 */
export function registerChangeRoutes(kit: ConsoleKit): void {
  const { deps } = kit;
  const change = (
    path: string,
    action: GatewayAction,
    make: (id: string, who: SignedIn, request: FastifyRequest) => Promise<unknown>,
  ) =>
    kit.routes.post(path, async (request, reply) => {
      const who = await signedIn(kit, request);
      checkCsrf(request, who.session);
      const id = idOf(request);
      await kit.access.authorizeOn(who.token, action, id);
      await make(id, who, request);
      return reply.redirect(backTo(request, id), 303);
    });

  change('/console/conversations/:id/approvals/:toolCallId', 'approve', async (id, who, request) => {
    const form = DecisionFormSchema.safeParse(request.body);
    if (!form.success) throw new GatewayAuthError(403, 'the decision form is incomplete');
    const decision: ApprovalDecision & { argumentsSha256: string } = {
      toolCallId: (request.params as { toolCallId: string }).toolCallId,
      decision: form.data.decision,
      by: who.token.name,
      argumentsSha256: form.data.argumentsSha256,
      ...(form.data.reason ? { reason: form.data.reason } : {}),
      ...(form.data.raiseKind && form.data.raise
        ? { raise: { [form.data.raiseKind]: form.data.raise } }
        : {}),
    };
    return deps.agent.approve(id, deps.signingKey ? signDecision(id, decision, deps.signingKey) : decision);
  });
  change('/console/conversations/:id/steer', 'steer', async (id, who, request) => {
    const text = (request.body as Record<string, unknown>).text;
    if (typeof text !== 'string' || !text.trim()) throw new GatewayAuthError(403, 'the steer form is empty');
    return deps.agent.steer(id, text, { sender: who.token.name });
  });
  change('/console/conversations/:id/abort', 'abort', (id, who) =>
    deps.agent.abort(id, { by: who.token.name }),
  );
  change('/console/conversations/:id/end', 'end', (id, who) =>
    deps.agent.end(id, `ended from the console by ${who.token.name}`),
  );
}

/** Where a change returns: the inbox when it was made there, else the conversation's page. */
function backTo(request: FastifyRequest, conversationId: string): string {
  const back = (request.body as Record<string, unknown>).back;
  return back === 'inbox' ? '/console/inbox' : `/console/conversations/${encodeURIComponent(conversationId)}`;
}
