import type { FastifyInstance } from 'fastify';
import { signDecision } from '../../client/sign-decision';
import type { ApprovalDecision } from '../../shared/approvals';
import { policyProgress } from '../../shared/pending-policy';
import { ApproveBodySchema } from '../gateway-api';
import type { GatewayAccess } from '../gateway-access';
import type { GatewayDeps } from '../gateway-deps';
import { BadRequest } from '../gateway-errors';
import { idOf, parseBody } from '../gateway-request';

/** The approvals a run waits for, and a decision on one as the token's identity. */
export function registerApprovalRoutes(app: FastifyInstance, deps: GatewayDeps, access: GatewayAccess) {
  const { agent } = deps;
  app.get('/v1/conversations/:id/approvals', async (request) => {
    const id = idOf(request);
    await access.allowed(request, 'status', id);
    const pending = await agent.pendingApprovals(id);
    // Under an approval policy, how far its quorum has come, in words beside the structure.
    return {
      pending: pending.map((approval) =>
        approval.policy
          ? { ...approval, policy: { ...approval.policy, progress: policyProgress(approval.policy) } }
          : approval,
      ),
    };
  });

  app.post('/v1/conversations/:id/approvals/:toolCallId', async (request) => {
    const id = idOf(request);
    const { toolCallId } = request.params as { toolCallId: string };
    const token = await access.allowed(request, 'approve', id);
    const body = parseBody(ApproveBodySchema, request.body);
    // The approver is the token's identity, never a name from the body.
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
      return agent.approve(id, {
        ...decision,
        signature: body.signature,
        signatureExpiresAt: body.signatureExpiresAt,
      });
    }
    return agent.approve(id, deps.signingKey ? signDecision(id, decision, deps.signingKey) : decision);
  });
}
