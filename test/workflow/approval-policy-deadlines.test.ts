import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { signDecision, signDelegation } from '../../src/client/sign-decision';
import type { ApprovalDecision } from '../../src/shared/approvals';
import { rawPublicKey } from '../../src/worker/floor-settings';
import { ApprovalPolicySchema } from '../../src/shared/approval-policy';
import type { AgentEvent } from '../../src/shared/events';
import type { WebhookDelivery } from '../../src/shared/webhooks';
import { ScriptedModel, mockedActivities, toolDescriptor } from '../support/mocked-activities';
import { describeWithTimeSkipping } from '../support/time-skipping';
import { waitFor } from '../support/test-worker';
import { eventsOf, waitForEvent } from '../support/wait-for-event';

const MINUTE = 60 * 1000;
const HOUR = 60 * MINUTE;

/** Deploys ask two leads; after 15 minutes one of oncall may decide too; after 4 hours it is rejected. */
const POLICY = ApprovalPolicySchema.parse({
  groups: { leads: ['alice', 'bob', 'carol'], oncall: ['dave', 'erin'] },
  rules: [
    {
      name: 'deploys',
      match: { tools: ['deploy'] },
      approvers: 'leads',
      quorum: 2,
      escalate: { afterMs: 15 * MINUTE, to: 'oncall', quorum: 1 },
      expire: { afterMs: 4 * HOUR, reason: 'nobody approved the deploy within 4 hours' },
    },
  ],
});

const deploy = toolDescriptor('deploy', { risk: 'high' });
const deployCall = { id: 'call_deploy', name: 'deploy', arguments: { target: 'production' } };
const ofType = <T extends AgentEvent['type']>(events: AgentEvent[], type: T) =>
  events.filter((event): event is Extract<AgentEvent, { type: T }> => event.type === type);

/**
 * The worker admits every conversation under POLICY (decisions unsigned: signatures are tested on
 * the real server), with a webhook for the policy's deadlines whose deliveries are kept.
 */
function policyActivities(model: ScriptedModel) {
  const mocked = mockedActivities({ model, tools: [deploy] });
  const deliveries: WebhookDelivery[] = [];
  mocked.activities.admitConversation = async () => ({
    admitted: true,
    approvalFloor: {},
    approvalPolicy: POLICY,
    webhooks: [{ id: 'pager', events: ['approval_escalated', 'approval_expired'] }],
  });
  mocked.activities.deliverWebhook = async (delivery: WebhookDelivery) => {
    deliveries.push(delivery);
    return { status: 204 };
  };
  return { ...mocked, deliveries };
}

describeWithTimeSkipping('approval policy deadlines on a time-skipping server', (harness) => {
  const handleOf = (id: string) => harness().client.workflow.getHandle(id);

  test('after 15 minutes without a quorum the request goes to oncall too, once, and an oncall allow runs it', async () => {
    const model = new ScriptedModel([{ toolCalls: [deployCall] }, { text: 'Deployed.' }]);
    const { activities, toolRuns, deliveries } = policyActivities(model);
    const id = `conv-${randomUUID()}`;
    await harness().withWorker(activities, async ({ agent }) => {
      await agent.send(id, 'Deploy to production');
      await waitFor(async () => (await agent.pendingApprovals(id))[0], 'the deploy to wait');
      await agent.approve(id, { toolCallId: deployCall.id, decision: 'allow_once', by: 'alice' });
      // Before the deadline oncall may not decide.
      await expect(
        agent.approve(id, { toolCallId: deployCall.id, decision: 'allow_once', by: 'dave' }),
      ).rejects.toThrow(/dave may not decide/);

      await harness().env.sleep(15 * MINUTE);
      const escalated = await waitForEvent(handleOf(id), 'approval_escalated');
      expect(escalated).toMatchObject({ to: 'oncall', members: ['dave', 'erin'], quorum: 1 });
      const [pending] = await agent.pendingApprovals(id);
      expect(pending!.policy).toMatchObject({ escalated: true, allowed: [{ by: 'alice' }] });

      await harness().env.sleep(30 * MINUTE);
      await agent.approve(id, { toolCallId: deployCall.id, decision: 'allow_once', by: 'dave' });
      await waitForEvent(handleOf(id), 'run_finished');
      const events = await eventsOf(handleOf(id));
      expect(ofType(events, 'approval_escalated')).toHaveLength(1);
      expect(deliveries.map((delivery) => [delivery.type, delivery.data])).toEqual([
        [
          'approval_escalated',
          expect.objectContaining({ toolCallId: deployCall.id, to: 'oncall', members: ['dave', 'erin'] }),
        ],
      ]);
      expect(ofType(events, 'approval_decided')).toEqual([
        expect.objectContaining({ decision: 'allow_once', by: 'dave' }),
      ]);
    });
    expect(toolRuns.map((run) => run.toolCallId)).toEqual([deployCall.id]);
  });

  test('after 4 hours without a quorum the policy rejects it with its reason, and the run goes on', async () => {
    const model = new ScriptedModel([{ toolCalls: [deployCall] }, { text: 'The deploy was not approved.' }]);
    const { activities, toolRuns, deliveries } = policyActivities(model);
    const id = `conv-${randomUUID()}`;
    await harness().withWorker(activities, async ({ agent }) => {
      await agent.send(id, 'Deploy to production');
      const pending = await waitFor(async () => (await agent.pendingApprovals(id))[0], 'the deploy to wait');
      expect(pending.expiresAt).toBe(pending.requestedAt + 4 * HOUR);

      await harness().env.sleep(4 * HOUR);
      const finished = await waitForEvent(handleOf(id), 'run_finished');
      expect(finished).toMatchObject({ outcome: 'answered', answer: 'The deploy was not approved.' });
      const decided = ofType(await eventsOf(handleOf(id)), 'approval_decided');
      expect(decided).toEqual([
        expect.objectContaining({
          decision: 'reject_once',
          by: 'policy',
          reason: 'nobody approved the deploy within 4 hours',
        }),
      ]);
      // Escalated at 15 minutes, then expired: each told once.
      expect(deliveries.map((delivery) => delivery.type)).toEqual(['approval_escalated', 'approval_expired']);
      expect(deliveries[1]!.data).toMatchObject({ reason: 'nobody approved the deploy within 4 hours' });
    });
    expect(JSON.parse((model.toolResult(deployCall.id)!.content[0] as { text: string }).text)).toMatchObject({
      status: 'blocked',
      reason: 'rejected by the approval policy: nobody approved the deploy within 4 hours',
    });
    expect(toolRuns).toEqual([]);
  });

  test("bob's delegation to dave for a day: dave's allow counts as bob's that day, and not after it", async () => {
    const keys = Object.fromEntries(
      ['alice', 'bob', 'dave'].map((name) => [name, generateKeyPairSync('ed25519')]),
    );
    const model = new ScriptedModel([
      { toolCalls: [deployCall] },
      { text: 'Deployed.' },
      { toolCalls: [{ ...deployCall, id: 'call_deploy_again' }] },
      { text: 'Not deployed.' },
    ]);
    const { activities, toolRuns } = policyActivities(model);
    activities.admitConversation = async () => ({
      admitted: true,
      approvalFloor: {},
      approvalPolicy: POLICY,
      approverKeys: Object.fromEntries(
        Object.entries(keys).map(([name, pair]) => [
          name,
          rawPublicKey(pair.publicKey.export({ format: 'pem', type: 'spki' }).toString(), name),
        ]),
      ),
    });
    const id = `conv-${randomUUID()}`;
    await harness().withWorker(activities, async ({ agent }) => {
      const delegation = signDelegation(
        'bob',
        'dave',
        (await harness().env.currentTimeMs()) + 24 * HOUR,
        keys.bob!.privateKey,
      );
      const allow = async (toolCallId: string, by: string, extra: Partial<ApprovalDecision> = {}) => {
        const [pending] = await agent.pendingApprovals(id);
        return agent.approve(
          id,
          signDecision(
            id,
            { toolCallId, decision: 'allow_once', by, argumentsSha256: pending!.argumentsSha256, ...extra },
            keys[by]!.privateKey,
            await harness().env.currentTimeMs(),
          ),
        );
      };

      await agent.send(id, 'Deploy to production');
      await waitFor(async () => (await agent.pendingApprovals(id))[0], 'the deploy to wait');
      await allow(deployCall.id, 'alice');
      await allow(deployCall.id, 'dave', { delegation });
      await waitForEvent(handleOf(id), 'run_finished', (event) => event.run === 1);

      await harness().env.sleep(24 * HOUR + MINUTE);
      await agent.send(id, 'Deploy again');
      await waitFor(async () => (await agent.pendingApprovals(id))[0], 'the second deploy to wait');
      await allow('call_deploy_again', 'alice');
      await expect(allow('call_deploy_again', 'dave', { delegation })).rejects.toThrow(
        /bob's delegation to dave expired/,
      );
    });
    expect(toolRuns.map((run) => run.toolCallId)).toEqual([deployCall.id]);
  });
});
