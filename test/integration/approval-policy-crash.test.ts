import type { ChildProcess } from 'node:child_process';
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { AgentClient } from '../../src/client/agent-client';
import type { ApprovalPolicyInput } from '../../src/shared/approval-policy';
import type { ApprovalDecision } from '../../src/shared/approvals';
import type { AgentEvent } from '../../src/shared/events';
import { signedDecisionText } from '../../src/shared/signed-decisions';
import { type RunningServer, startDevServer } from '../../src/temporal-server/dev-server';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';
import { killWorkerProcess, spawnWorkerProcess } from '../support/spawn-worker-process';
import { waitFor } from '../support/test-worker';
import { unclaimedPort } from '../support/unclaimed-port';

// Everything an approval policy decides lives in workflow state and on durable timers: a worker
// killed between two approvers, or the server down when the escalation is due, loses nothing.
const APPROVERS = ['alice', 'bob', 'dave'] as const;
type Approver = (typeof APPROVERS)[number];
const keys = Object.fromEntries(APPROVERS.map((name) => [name, generateKeyPairSync('ed25519')])) as Record<
  Approver,
  ReturnType<typeof generateKeyPairSync>
>;
const ESCALATE_AFTER_MS = 4_000;

const children: ChildProcess[] = [];
let model: ScriptedModelServer | undefined;
afterEach(async () => {
  for (const child of children.splice(0)) await killWorkerProcess(child);
  await model?.close();
  model = undefined;
});

/** A worker process with approver keys and this policy, as `durable-agent worker` reads them from files. */
async function policyWorkerEnv(address: string, workspace: string): Promise<Record<string, string>> {
  const keysFile = path.join(workspace, 'approver-keys.json');
  await writeFile(
    keysFile,
    JSON.stringify(
      Object.fromEntries(
        APPROVERS.map((name) => [
          name,
          keys[name].publicKey.export({ format: 'pem', type: 'spki' }).toString(),
        ]),
      ),
    ),
  );
  const policy: ApprovalPolicyInput = {
    groups: { leads: ['alice', 'bob'], oncall: ['dave'] },
    rules: [
      {
        match: { tools: ['exec'] },
        approvers: 'leads',
        quorum: 2,
        escalate: { afterMs: ESCALATE_AFTER_MS, to: 'oncall' },
      },
    ],
  };
  const policyFile = path.join(workspace, 'policy.json');
  await writeFile(policyFile, JSON.stringify(policy));
  return {
    TEST_TEMPORAL_ADDRESS: address,
    TASK_QUEUE: `policy-crash-${randomUUID()}`,
    OPENAI_BASE_URL: model!.baseUrl,
    WORKSPACE: workspace,
    MARKER_DIR: workspace,
    DURABLE_AGENT_APPROVER_KEYS: keysFile,
    AGENT_APPROVAL_POLICY: policyFile,
  };
}

async function startWorker(env: Record<string, string>): Promise<ChildProcess> {
  const child = await spawnWorkerProcess(env);
  children.push(child);
  return child;
}

/** A conversation whose model runs `echo ran >> ran.txt` once allowed; returns once the call waits. */
async function waitingExec(agent: AgentClient, workspace: string) {
  const id = `conv-policy-crash-${randomUUID()}`;
  await agent.send(id, 'deploy', { options: { workspace } });
  const pending = await waitFor(async () => (await agent.pendingApprovals(id))[0], 'the exec call to wait');
  const decide = (by: Approver) => {
    const expiresAt = Date.now() + 10 * 60_000;
    const text = signedDecisionText({
      conversationId: id,
      toolCallId: pending.toolCallId,
      argumentsSha256: pending.argumentsSha256,
      decision: 'allow_once',
      by,
      expiresAt,
    });
    const decision: ApprovalDecision = {
      toolCallId: pending.toolCallId,
      decision: 'allow_once',
      by,
      signature: sign(null, Buffer.from(text), keys[by].privateKey).toString('base64'),
      signatureExpiresAt: expiresAt,
    };
    return agent.approve(id, decision);
  };
  return { id, decide };
}

const ranLines = (workspace: string) => {
  const file = path.join(workspace, 'ran.txt');
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
};
const ofType = (events: AgentEvent[], type: AgentEvent['type']) =>
  events.filter((event) => event.type === type);

function execModel(): Promise<ScriptedModelServer> {
  return startScriptedModelServer([
    { toolCalls: [{ id: 'call_deploy', name: 'exec', arguments: { command: 'echo ran >> ran.txt' } }] },
    { text: 'Deployed.' },
  ]);
}

test("a worker SIGKILLed between alice's allow and bob's: the next worker counts alice's, bob's runs the command once", async () => {
  model = await execModel();
  const workspace = await mkdtemp(path.join(os.tmpdir(), 'policy-crash-'));
  const address = process.env.TEST_TEMPORAL_ADDRESS!;
  const env = await policyWorkerEnv(address, workspace);
  const connection = await Connection.connect({ address });
  try {
    const agent = new AgentClient(new Client({ connection }), env.TASK_QUEUE!);
    const first = await startWorker(env);
    const { id, decide } = await waitingExec(agent, workspace);
    expect(await decide('alice')).toMatchObject({ waitingFor: '1 of 2 of leads have allowed' });

    await killWorkerProcess(first);
    await startWorker(env);
    // alice's allow survived the worker: she cannot count twice, and bob's makes the quorum.
    await expect(decide('alice')).rejects.toThrow(/alice has allowed .* already/);
    expect(await decide('bob')).toMatchObject({ decision: 'allow_once' });
    await waitFor(
      async () => ((await agent.status(id)).status === 'idle' ? true : undefined),
      'the run to finish',
    );
    expect(ranLines(workspace)).toBe(1);
    const events = await agent.events(id);
    expect(ofType(events, 'approval_decided')).toEqual([expect.objectContaining({ by: 'alice, bob' })]);
  } finally {
    await connection.close();
  }
});

test('the server restarted while the escalation timer runs: the request escalates once, and oncall runs the command once', async () => {
  model = await execModel();
  const workspace = await mkdtemp(path.join(os.tmpdir(), 'policy-restart-'));
  const port = await unclaimedPort();
  const dbFile = path.join(workspace, 'temporal.db');
  let server: RunningServer | undefined = await startDevServer({ port, dbFile });
  const env = await policyWorkerEnv(server.address, workspace);
  await startWorker(env);
  const connection = await Connection.connect({ address: server.address });
  try {
    const agent = new AgentClient(new Client({ connection }), env.TASK_QUEUE!);
    const { id, decide } = await waitingExec(agent, workspace);
    const askedAt = Date.now();
    await decide('alice');

    // Down before the escalation is due, back after it.
    await server.stop();
    server = undefined;
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, askedAt + ESCALATE_AFTER_MS + 1_000 - Date.now())),
    );
    server = await startDevServer({ port, dbFile });

    const escalated = await waitFor(async () => {
      const events = await agent.events(id).catch(() => []);
      return ofType(events, 'approval_escalated').length > 0 ? events : undefined;
    }, 'the escalation after the restart');
    expect(ofType(escalated, 'approval_escalated')).toEqual([expect.objectContaining({ to: 'oncall' })]);
    await decide('dave');
    await waitFor(
      async () => ((await agent.status(id)).status === 'idle' ? true : undefined),
      'the run to finish',
    );
    expect(ranLines(workspace)).toBe(1);
    const events = await agent.events(id);
    expect(ofType(events, 'approval_escalated')).toHaveLength(1);
    expect(ofType(events, 'approval_decided')).toEqual([expect.objectContaining({ by: 'dave' })]);
  } finally {
    await connection.close();
    for (const child of children.splice(0)) await killWorkerProcess(child);
    await server?.stop();
  }
}, 180_000);
