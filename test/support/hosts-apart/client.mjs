// A service on a host of its own that is no Temporal client: through the gateway (HTTPS, its CA in
// NODE_EXTRA_CA_CERTS) it starts a conversation with MESSAGE, follows its events, allows the first
// approval it is asked for, and exits once the run has finished. Environment: GATEWAY_URL,
// GATEWAY_TOKEN, CONVERSATION_ID, MESSAGE. Prints one JSON line per event, and per decision it sent.
import { setTimeout } from 'node:timers';
import { TextDecoder } from 'node:util';

const { GATEWAY_URL: gateway, GATEWAY_TOKEN: token, CONVERSATION_ID: id, MESSAGE: text } = process.env;
const say = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
// Bounded, whatever the gateway does.
setTimeout(() => {
  say({ gaveUp: 'no finished run after 100 s' });
  process.exit(2);
}, 100_000).unref();

async function call(method, route, body) {
  const response = await fetch(`${gateway}${route}`, {
    method,
    headers,
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const answer = await response.text();
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${answer}`);
  return answer ? JSON.parse(answer) : undefined;
}

async function decide(event) {
  const pending = await call('GET', `/v1/conversations/${id}/approvals`);
  const asked = pending.pending.find((approval) => approval.toolCallId === event.toolCallId);
  const decided = await call('POST', `/v1/conversations/${id}/approvals/${event.toolCallId}`, {
    decision: 'allow_once',
    argumentsSha256: asked.argumentsSha256,
    reason: 'counting is fine',
  });
  say({ decided });
}

/** The events of the conversation as the gateway streams them, each handed to `onEvent`. */
async function follow(onEvent) {
  const response = await fetch(`${gateway}/v1/conversations/${id}/events`, { headers });
  if (!response.ok) throw new Error(`events: ${response.status} ${await response.text()}`);
  const decoder = new TextDecoder();
  let buffered = '';
  for await (const chunk of response.body) {
    buffered += decoder.decode(chunk, { stream: true });
    for (let end = buffered.indexOf('\n\n'); end >= 0; end = buffered.indexOf('\n\n')) {
      const block = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim())
        .join('\n');
      if (data && (await onEvent(JSON.parse(data)))) return;
    }
  }
}

await call('POST', '/v1/conversations', { id, text });
await follow(async (event) => {
  say(event);
  if (event.type === 'approval_requested') await decide(event);
  return event.type === 'run_finished';
});
process.exit(0);
