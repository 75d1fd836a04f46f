// A service that is not a Temporal client, in a process of its own: it takes the worker's webhooks,
// checks each signature, and approves what it is asked to through the gateway with its own token.
// Environment: WEBHOOK_SECRET, GATEWAY_TOKEN. Prints its port, then one JSON line per delivery.
import { Buffer } from 'node:buffer';
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';

const secret = process.env.WEBHOOK_SECRET;
const token = process.env.GATEWAY_TOKEN;
const say = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);

function verified(header, body) {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '');
  if (!match || Math.abs(Date.now() / 1000 - Number(match[1])) > 300) return false;
  const expected = createHmac('sha256', secret).update(`${match[1]}.${body}`).digest();
  return timingSafeEqual(Buffer.from(match[2], 'hex'), expected);
}

const server = http.createServer(async (request, response) => {
  let body = '';
  for await (const chunk of request) body += chunk;
  if (!verified(request.headers['durable-agent-signature'], body)) {
    say({ verified: false });
    response.writeHead(401).end();
    return;
  }
  const delivery = JSON.parse(body);
  say({ verified: true, id: delivery.id, type: delivery.type, data: delivery.data });
  response.writeHead(204).end();
  if (delivery.type === 'approval_requested') {
    const answer = await fetch(delivery.links.decide, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        decision: 'allow_once',
        argumentsSha256: delivery.data.argumentsSha256,
        reason: `checked ${delivery.data.toolName}`,
      }),
    });
    say({ approved: answer.status, answer: await answer.json() });
  }
});
server.listen(0, '127.0.0.1', () => say({ port: server.address().port }));
