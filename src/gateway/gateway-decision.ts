import { signDecision } from '../client/sign-decision';
import type { ApprovalDecision } from '../shared/approvals';
import type { ApprovalReceipt } from '../shared/conversation-api';
import type { GatewayToken } from './gateway-api';
import type { GatewayDeps } from './gateway-deps';
import { BadRequest } from './gateway-errors';

/** A decision as a caller of the gateway (any of its doors) sends it, before it is made the token's. */
export interface DecisionBody {
  decision: ApprovalDecision['decision'];
  argumentsSha256: string;
  reason?: string | undefined;
  signature?: string | undefined;
  signatureExpiresAt?: number | undefined;
  raise?: ApprovalDecision['raise'] | undefined;
}

/**
 * Decides a pending approval as `token`'s identity, whatever the body says: the caller's own
 * signature when it sent one, else the gateway's when it has a key, else unsigned (which a worker
 * with approver keys refuses). The conversation's approvers and approval policy then judge it as
 * they judge every decision.
 */
export function decideAs(
  deps: Pick<GatewayDeps, 'agent' | 'signingKey'>,
  token: GatewayToken,
  conversationId: string,
  toolCallId: string,
  body: DecisionBody,
): Promise<ApprovalReceipt> {
  const decision: ApprovalDecision & { argumentsSha256: string } = {
    toolCallId,
    decision: body.decision,
    by: token.name,
    argumentsSha256: body.argumentsSha256,
    ...(body.reason !== undefined ? { reason: body.reason } : {}),
    ...(body.raise !== undefined ? { raise: body.raise } : {}),
  };
  if (body.signature !== undefined) {
    if (body.signatureExpiresAt === undefined)
      throw new BadRequest('a signature needs its signatureExpiresAt');
    return deps.agent.approve(conversationId, {
      ...decision,
      signature: body.signature,
      signatureExpiresAt: body.signatureExpiresAt,
    });
  }
  return deps.agent.approve(
    conversationId,
    deps.signingKey ? signDecision(conversationId, decision, deps.signingKey) : decision,
  );
}
