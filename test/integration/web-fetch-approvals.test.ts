import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { ApprovalDecision } from '../../src/shared/approvals';
import { approveUpdate, pendingApprovalsQuery, stateQuery } from '../../src/shared/conversation-api';
import { builtinTools } from '../../src/tools/builtin/builtin-tools';
import { MemoryStore } from '../../src/tools/builtin/memory-store';
import { ToolRegistry } from '../../src/tools/registry';
import { nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { toolResultIn } from '../support/scripted-model';
import { waitFor } from '../support/test-worker';
import { eventsOf, waitForEvent } from '../support/wait-for-event';

/**
 * Standing decisions on `web_fetch` hold per host, through a real conversation: allow_always at
 * one host does not let the model fetch from another unasked, and reject_always at a host blocks
 * later fetches there only. Two names of the loopback (127.0.0.1 and localhost) are the two hosts;
 * the worker's web_fetch may reach private addresses, as a test's must.
 */
const harness = useNockedHarness([], {
  registry: new ToolRegistry(
    builtinTools({
      webFetch: { allowPrivateNetwork: true, timeoutMs: 60_000 },
      memory: new MemoryStore(mkdtempSync(path.join(os.tmpdir(), 'durable-agent-memory-'))),
    }),
  ),
});
const handleOf = (id: string) => harness().client.workflow.getHandle(id);

let server: http.Server;
let port: number;
/** The paths fetched, in order. */
const served: string[] = [];

beforeAll(async () => {
  server = http.createServer((request, response) => {
    served.push(request.url ?? '');
    response.writeHead(200, { 'content-type': 'text/plain' }).end(`page ${request.url}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const decide = (id: string, decision: ApprovalDecision) =>
  handleOf(id).executeUpdate(approveUpdate, { args: [decision] });

/** Whether the call asked for a decision or ended without asking, whichever the conversation shows first. */
function askedOrEnded(id: string, toolCallId: string): Promise<'asked' | 'ended'> {
  return waitFor(async () => {
    const pending = await handleOf(id).query(pendingApprovalsQuery);
    if (pending.some((approval) => approval.toolCallId === toolCallId)) return 'asked';
    const events = await eventsOf(handleOf(id));
    return events.some((event) => event.type === 'tool_execution_end' && event.toolCallId === toolCallId)
      ? 'ended'
      : undefined;
  }, `${toolCallId} to ask or end`);
}

test('allow_always at one host leaves another host asking; reject_always at a host blocks it there only', async () => {
  const at = (host: string, page: string) => `http://${host}:${port}/${page}`;
  const fetchCall = (id: string, url: string) => ({
    toolCalls: [{ id, name: 'web_fetch', arguments: { url } }],
  });
  const script = nockModel([
    fetchCall('call_a1', at('127.0.0.1', 'a1')),
    fetchCall('call_a2', at('127.0.0.1', 'a2')),
    fetchCall('call_b1', at('localhost', 'b1')),
    fetchCall('call_b2', at('localhost', 'b2')),
    fetchCall('call_a3', at('127.0.0.1', 'a3')),
    { text: 'Done.' },
  ]);
  const id = `conv-${randomUUID()}`;
  await harness().agent.send(id, 'Fetch the pages');

  expect(await askedOrEnded(id, 'call_a1')).toBe('asked');
  const [first] = await handleOf(id).query(pendingApprovalsQuery);
  expect(first).toMatchObject({ toolCallId: 'call_a1', toolName: 'web_fetch', mode: 'ask' });
  await decide(id, { toolCallId: 'call_a1', decision: 'allow_always', by: 'alice' });

  // Host A again: no question. Host B: asked, as if nothing had been decided.
  expect(await askedOrEnded(id, 'call_b1')).toBe('asked');
  expect(served).toEqual(['/a1', '/a2']);
  const [atB] = await handleOf(id).query(pendingApprovalsQuery);
  expect(atB).toMatchObject({ toolCallId: 'call_b1', scope: 'web_fetch@localhost' });
  await decide(id, { toolCallId: 'call_b1', decision: 'reject_always', by: 'bob' });

  // Host B again: blocked without asking. Host A still allowed.
  expect(await askedOrEnded(id, 'call_b2')).toBe('ended');
  await waitForEvent(handleOf(id), 'run_finished');
  expect(served).toEqual(['/a1', '/a2', '/a3']);

  const asked = (await eventsOf(handleOf(id))).filter((event) => event.type === 'approval_requested');
  expect(asked.map((event) => event.type === 'approval_requested' && event.toolCallId)).toEqual([
    'call_a1',
    'call_b1',
  ]);
  const resultOf = (callId: string) =>
    toolResultIn(
      script.requests.find((request) => request.messages.some((m) => m.tool_call_id === callId))!,
      callId,
    );
  expect(resultOf('call_a2')).toContain('page /a2');
  expect(JSON.parse(resultOf('call_b1'))).toEqual({
    status: 'blocked',
    tool: 'web_fetch',
    reason: 'rejected by bob',
  });
  expect(JSON.parse(resultOf('call_b2'))).toEqual({
    status: 'blocked',
    tool: 'web_fetch',
    reason: 'web_fetch (web_fetch@localhost) was rejected for this conversation by bob',
  });
  expect(resultOf('call_a3')).toContain('page /a3');
  expect((await handleOf(id).query(stateQuery)).approvals.standing).toEqual({
    'web_fetch@127.0.0.1': { decision: 'allow', by: 'alice' },
    'web_fetch@localhost': { decision: 'reject', by: 'bob' },
  });
});
