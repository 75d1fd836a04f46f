import type { FastifyInstance } from 'fastify';
import { policyProgress } from '../../shared/pending-policy';
import { ApproveBodySchema } from '../gateway-api';
import type { GatewayAccess } from '../gateway-access';
import type { GatewayDeps } from '../gateway-deps';
import { idOf, parseBody } from '../gateway-request';
import { decideAsToken } from '../token-decision';

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
    return decideAsToken(deps, id, token, toolCallId, body);
  });
}
