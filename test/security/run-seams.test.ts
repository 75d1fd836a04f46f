import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { AgentClient } from '../../src/client/agent-client';
import { signApprovalMode } from '../../src/client/sign-decision';
import { rawPublicKey } from '../../src/worker/floor-settings';
import { ask } from '../support/ask';
import { NOCK_MODEL_URL, nockModel } from '../support/nock-model';
import { useNockedHarness } from '../support/nocked-harness';
import { startHarness, waitFor } from '../support/test-worker';

/**
 * The seams between runs and clients: state a client put in a workflow's input counts only in the
 * run it starts (where the worker's floors refuse it), never in a later run Temporal starts with the
 * same input; a place in a tree of sub-agents is Temporal's to vouch for, not the client's; loosening
 * a running conversation's approvals is a decision with an approver's signature.
 */
jest.setTimeout(180_000);

const alice = generateKeyPairSync('ed25519');
const mallory = generateKeyPairSync('ed25519');
const pem = (key: typeof alice.publicKey) => key.export({ format: 'pem', type: 'spki' }).toString();

const harness = useNockedHarness([], {
  approverKeys: { alice: rawPublicKey(pem(alice.publicKey), 'alice') },
});
const unique = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

/**
 * Starts `conversation` as a raw Temporal client would, with whatever input it likes; returns why it
 * failed, or says it was not refused (still running after a while: then it is terminated).
 */
async function failureOf(id: string, input: Record<string, unknown>) {
  const handle = await harness().client.workflow.start('conversation', {
    workflowId: id,
    taskQueue: harness().taskQueue,
    args: [input],
  });
  const outcome = await Promise.race([
    handle.result().then(
      () => 'completed, not refused',
      (failure: unknown) =>
        failure instanceof WorkflowFailedError ? (failure.cause?.message ?? '') : String(failure),
    ),
    new Promise<string>((resolve) => setTimeout(() => resolve('still running, not refused'), 15_000)),
  ]);
  await handle.terminate('test over').catch(() => undefined);
  return outcome;
}

describe('carried state counts only from a continue-as-new the workflow made', () => {
  test('a cron run carries the client input of the first; its forged standing approval is refused in every run', async () => {
    const marker = path.join(harness().workspace, `cron-ran-${randomUUID()}`);
    const script = nockModel([
      { toolCalls: [{ id: 'call_exec', name: 'exec', arguments: { command: `touch ${marker}` } }] },
      { text: 'done' },
    ]);
    const id = unique('conv-cron');
    const handle = await harness().client.workflow.start('conversation', {
      workflowId: id,
      taskQueue: harness().taskQueue,
      cronSchedule: '@every 2s',
      args: [
        {
          initialMessage: { text: 'run it', messageId: 'm1' },
          carried: { standingApprovals: { exec: { decision: 'allow', by: 'mallory' } } },
        },
      ],
    });
    try {
      // Three runs: the first a client's start, the next two cron runs with the same input.
      const runs = new Set<string>();
      await waitFor(
        async () => {
          const { runId, status } = await handle.describe();
          runs.add(runId);
          // Or the model was asked: a run took the forged state (the assertions below say so).
          if (script.requests.length > 0) return true;
          return runs.size >= 3 && status.name === 'RUNNING' ? true : undefined;
        },
        'three cron runs',
        60_000,
        200,
      );
      // A cron run that fails is closed and the next one scheduled: the reason is in its history.
      expect(script.requests).toHaveLength(0);
      const refusals = await Promise.all(
        [...runs].slice(0, 2).map(async (runId) => {
          const history = await harness().client.workflow.getHandle(id, runId).fetchHistory();
          const failed = history.events?.find((event) => event.workflowExecutionFailedEventAttributes);
          return failed?.workflowExecutionFailedEventAttributes?.failure?.message ?? 'not failed';
        }),
      );
      for (const refusal of refusals)
        expect(refusal).toMatch(/carried state \(standingApprovals\) is accepted only/);
    } finally {
      await handle.terminate('test over').catch(() => undefined);
    }
    expect(script.requests).toHaveLength(0);
    expect(existsSync(marker)).toBe(false);
  });

  test('a continue-as-new the workflow made still carries everything', async () => {
    const id = unique('conv-continued');
    nockModel([{ text: 'one' }, { text: 'two' }]);
    await harness().agent.start(id, { maxHistoryEvents: 50 });
    await ask(harness().agent, id, 'first');
    await waitFor(
      async () =>
        (await harness().client.workflow.getHandle(id).describe()).runId !== undefined ? true : undefined,
      'the conversation',
    );
    // Pad the history past the bound, so the next idle point continues as new.
    const before = (await harness().client.workflow.getHandle(id).describe()).runId;
    for (let i = 0; i < 30; i++) await harness().agent.setApprovalMode(id, { mode: 'ask' });
    await waitFor(
      async () =>
        (await harness().client.workflow.getHandle(id).describe()).runId !== before ? true : undefined,
      'a continue-as-new',
    );
    const { finished } = await ask(harness().agent, id, 'second');
    expect(finished.answer).toBe('two');
    expect((await harness().agent.status(id)).transcriptLength).toBe(4);
  });
});

describe('a place in a tree of sub-agents is vouched for by Temporal, not by the client', () => {
  test.each<[string, () => { id: string; options: Record<string, unknown> }]>([
    [
      'ancestors naming another conversation',
      () => ({ id: unique('conv-forger'), options: { ancestors: ['conv-victim'] } }),
    ],
    [
      'ancestors naming itself',
      () => {
        const id = unique('conv-self');
        return { id, options: { ancestors: [id] } };
      },
    ],
    [
      'a sub-agent id with no parent',
      () => ({ id: `conv-victim.sub-${randomUUID().slice(0, 8)}`, options: {} }),
    ],
    [
      'a sub-agent id with its parent as ancestor',
      () => ({ id: `conv-victim.sub-${randomUUID().slice(0, 8)}`, options: { ancestors: ['conv-victim'] } }),
    ],
  ])('%s is refused before anything runs', async (_label, make) => {
    const { id, options } = make();
    const script = nockModel([{ text: 'should never be asked' }]);
    const reason = await failureOf(id, { options, initialMessage: { text: 'hi', messageId: 'm1' } });
    expect(reason).toMatch(/^refused: /);
    expect(script.requests).toHaveLength(0);
  });

  test('a real sub-agent still starts, knows its tree, and its parent reaches it', async () => {
    const parent = unique('conv-parent');
    nockModel([
      { toolCalls: [{ id: 'call_spawn', name: 'sessions_spawn', arguments: { task: 'say hi' } }] },
      { text: 'hi from the child' },
      { text: 'the child said hi' },
    ]);
    const { finished } = await ask(harness().agent, parent, 'delegate', {
      options: { approval: { mode: 'auto' } },
    });
    expect(finished.answer).toBe('the child said hi');
    const child = `${parent}.sub-call_spawn`;
    expect((await harness().agent.status(child)).root).toBe(parent);
    expect((await harness().agent.status(parent)).root).toBe(parent);
  });
});

describe('loosening a running conversation’s approvals is a signed decision', () => {
  test('a loosening sent before the worker has admitted the conversation waits for its keys, and is refused unsigned', async () => {
    // Nobody polls this queue yet: the change reaches the workflow in its very first task, before
    // the admission that brings the worker's approver keys.
    const taskQueue = `test-unpolled-${randomUUID()}`;
    const early = new AgentClient(harness().client, taskQueue);
    const id = unique('conv-early-mode');
    await early.start(id, { approval: { mode: 'ask' } });
    const change = early.setApprovalMode(id, { mode: 'auto' }).then(
      () => 'taken',
      (error: Error) => error.message,
    );
    const worker = await startHarness({
      modelBaseUrl: NOCK_MODEL_URL,
      taskQueue,
      approverKeys: { alice: rawPublicKey(pem(alice.publicKey), 'alice') },
    });
    try {
      expect(await change).toMatch(/is a decision: name who makes it/);
      expect((await early.status(id)).approvalMode).toBe('ask');
    } finally {
      await harness()
        .client.workflow.getHandle(id)
        .terminate('test over')
        .catch(() => undefined);
      await worker.close();
    }
  });

  test('unsigned, signed by someone else, replayed, or expired: refused; signed by an approver: taken; tightening needs no one', async () => {
    const id = unique('conv-mode');
    await harness().agent.start(id, { approval: { mode: 'ask' } });
    const refusal = (promise: Promise<unknown>) =>
      promise.then(
        () => 'taken',
        (error: Error) => error.message,
      );
    expect(await refusal(harness().agent.setApprovalMode(id, { mode: 'auto' }))).toMatch(
      /is a decision: name who makes it/,
    );
    expect(await refusal(harness().agent.setApprovalMode(id, { mode: 'auto', by: 'alice' }))).toMatch(
      /signed decisions only/,
    );
    expect(await refusal(harness().agent.setApprovalMode(id, { mode: 'default', by: 'alice' }))).toMatch(
      /signed decisions only/,
    );
    expect(
      await refusal(
        harness().agent.setApprovalMode(
          id,
          signApprovalMode(id, { mode: 'auto', by: 'alice' }, mallory.privateKey),
        ),
      ),
    ).toMatch(/not alice's/);
    expect(
      await refusal(
        harness().agent.setApprovalMode(
          id,
          signApprovalMode(id, { mode: 'auto', by: 'mallory' }, mallory.privateKey),
        ),
      ),
    ).toMatch(/mallory has no approver key/);
    expect(
      await refusal(
        harness().agent.setApprovalMode(
          id,
          signApprovalMode(`${id}-other`, { mode: 'auto', by: 'alice' }, alice.privateKey),
        ),
      ),
    ).toMatch(/not alice's/);
    expect(
      await refusal(
        harness().agent.setApprovalMode(
          id,
          signApprovalMode(id, { mode: 'auto', by: 'alice' }, alice.privateKey, Date.now() - 120_000, 60_000),
        ),
      ),
    ).toMatch(/expired/);
    const signed = signApprovalMode(id, { mode: 'auto', by: 'alice' }, alice.privateKey);
    expect(await refusal(harness().agent.setApprovalMode(id, signed))).toBe('taken');
    expect((await harness().agent.status(id)).approvalMode).toBe('auto');
    // Back to asking needs no signature; the same signature a second time is refused.
    expect(await refusal(harness().agent.setApprovalMode(id, { mode: 'ask' }))).toBe('taken');
    expect(await refusal(harness().agent.setApprovalMode(id, signed))).toMatch(/used already/);
    expect((await harness().agent.status(id)).approvalMode).toBe('ask');
  });
});
