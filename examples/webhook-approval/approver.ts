// The approver: a small HTTP service that is no Temporal client. The worker posts it each
// `approval_requested` webhook; it checks the signature, applies its rule (deploys to staging are
// allowed, anything else rejected) and decides through the gateway with a token of its own.
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

interface ApprovalRequested {
  id: string;
  type: string;
  conversationId: string;
  /** `arguments` is the model's JSON text as it sent it; `argumentsSha256` its hash, which a decision names. */
  data: { toolCallId: string; toolName: string; arguments: string; argumentsSha256: string };
}

/** `durable-agent-signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, at most 5 minutes old. */
function signedBy(secret: string, header: string | undefined, body: string): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '');
  if (!match || Math.abs(Date.now() / 1000 - Number(match[1])) > 300) return false;
  const expected = createHmac('sha256', secret).update(`${match[1]}.${body}`).digest();
  return timingSafeEqual(Buffer.from(match[2]!, 'hex'), expected);
}

function rule(call: ApprovalRequested['data']): { decision: string; reason: string } {
  let environment: unknown;
  try {
    environment = (JSON.parse(call.arguments) as { environment?: unknown }).environment;
  } catch {
    // Not JSON (or cut short): nothing to allow.
  }
  if (call.toolName === 'deploy' && environment === 'staging')
    return { decision: 'allow_once', reason: 'deploys to staging are allowed' };
  return { decision: 'reject_once', reason: `${call.toolName} to ${String(environment)} needs a person` };
}

export async function startApprover(options: { secret: string; gatewayUrl: string; token: string }) {
  const seen = new Set<string>();
  const decide = async ({ conversationId, data }: ApprovalRequested) => {
    const { decision, reason } = rule(data);
    const url = `${options.gatewayUrl}/v1/conversations/${encodeURIComponent(conversationId)}/approvals/${encodeURIComponent(data.toolCallId)}`;
    const response = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${options.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ decision, reason, argumentsSha256: data.argumentsSha256 }),
    });
    console.log(`approver: ${decision} ${data.toolName} ${data.arguments} (gateway ${response.status})`);
  };
  const server = http.createServer(async (request, response) => {
    let body = '';
    for await (const chunk of request) body += chunk;
    if (!signedBy(options.secret, request.headers['durable-agent-signature'] as string | undefined, body)) {
      response.writeHead(401).end();
      return;
    }
    const delivery = JSON.parse(body) as ApprovalRequested;
    response.writeHead(204).end();
    // Deliveries are retried until answered: one already seen is acknowledged and dropped.
    if (delivery.type !== 'approval_requested' || seen.has(delivery.id)) return;
    seen.add(delivery.id);
    decide(delivery).catch((error: unknown) => console.error('approver: deciding failed', error));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
