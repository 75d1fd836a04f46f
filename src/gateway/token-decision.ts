import { signDecision } from '../client/sign-decision';
import type { z } from 'zod';
import type { ApprovalDecision } from '../shared/approvals';
import type { ApprovalReceipt } from '../shared/conversation-api';
import type { ApproveBodySchema, GatewayToken } from './gateway-api';
import type { GatewayDeps } from './gateway-deps';
import { BadRequest } from './gateway-errors';

/**
 * A decision on a pending approval as the token's identity, never a name from the body; bound to the
 * arguments' SHA-256 the decider saw. Signed by the gateway when it has a key, unless the caller
 * signed it itself. Every door that takes decisions (the approvals route, AG-UI) decides through here.
 */
export function decideAsToken(
  deps: GatewayDeps,
  conversationId: string,
  token: GatewayToken,
  toolCallId: string,
  body: z.infer<typeof ApproveBodySchema>,
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
