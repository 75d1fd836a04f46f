import { randomUUID } from 'node:crypto';
import type { PendingApproval } from '../../src/shared/approvals';
import type { Budget } from '../../src/shared/budget';
import { subAgentId } from '../../src/shared/sub-agents';
import { assertCliBuilt, runCli } from '../support/cli-process';
import { nockModel } from '../support/nock-model';
import type { ChatRequest, ScriptedReply } from '../support/scripted-model';
import { useNockedHarness } from '../support/nocked-harness';
import { echoTool } from '../support/test-tools';
import { waitFor } from '../support/test-worker';
import { waitForEvent } from '../support/wait-for-event';

// The worker prices each model call by its table: US dollars per million tokens, cached input at
// its own price. `status` shows cached tokens and cost, and a dollar budget pauses a run.
const harness = useNockedHarness([echoTool], {
  prices: { 'scripted-model': { input: 2, cachedInput: 0.5, output: 8 } },
});
const env = () => ({
  ...process.env,
  TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS,
  AGENT_TASK_QUEUE: harness().taskQueue,
});
const echoCall = (id: string) => ({ id, name: 'echo', arguments: { text: id } });
/** 200 fresh and 800 cached input tokens, 100 output: (200 × 2 + 800 × 0.5 + 100 × 8) / 1e6 = $0.0016. */
const CALL_USAGE = { prompt: 1_000, cached: 800, completion: 100, reasoning: 30 };

beforeAll(() => assertCliBuilt());

test('status shows cached and reasoning tokens and what the calls cost', async () => {
  nockModel([
    { toolCalls: [echoCall('call_one')], usage: CALL_USAGE },
    { text: 'Echoed.', usage: CALL_USAGE },
  ]);
  const id = `conv-${randomUUID()}`;
  await harness().agent.send(id, 'Echo once.');
  const finished = await waitForEvent(harness().client.workflow.getHandle(id), 'run_finished');
  expect(finished.usage).toEqual({
    tokens: 2_200,
    toolCalls: 1,
    cachedInputTokens: 1_600,
    reasoningTokens: 60,
    usd: expect.closeTo(0.0032, 10),
  });

  const status = await runCli(['status', id], env());
  expect(status.stderr).toBe('');
  expect(status.stdout).toContain(
    '  spent 2200 tokens (1600 cached, 60 reasoning), 1 tool call, $0.0032 (run 1: 2200 tokens (1600 cached, 60 reasoning), 1 tool call, $0.0032)',
  );
});

/** 5000 fresh input tokens and 500 output: (5000 × 2 + 500 × 8) / 1e6 = $0.014 a call. */
const DEAR_CALL = { prompt: 5_000, completion: 500 };

test('send --budget-usd 0.01 pauses the run once its calls cost that much; approve --raise-usd lets it go on', async () => {
  nockModel([
    { toolCalls: [echoCall('call_a')], usage: DEAR_CALL },
    { toolCalls: [echoCall('call_b')], usage: DEAR_CALL },
    { text: 'Two echoes.', usage: DEAR_CALL },
  ]);
  const id = `conv-${randomUUID()}`;
  const sent = await runCli(['send', id, '--no-wait', '--budget-usd', '0.01', 'Echo twice.'], env());
  expect(sent).toMatchObject({ code: 0, stderr: expect.stringMatching(/^started conversation /) });
  const pause = await waitFor<PendingApproval>(
    async () =>
      (await harness().agent.pendingApprovals(id)).find((pending) => pending.toolCallId === 'budget-1'),
    'the cost budget pause',
  );
  // The first call (nothing spent yet) went ahead; before the second, $0.014 of $0.01 is spent.
  expect(pause.budget).toMatchObject({ kind: 'usd', limit: 0.01, defaultRaise: 0.01 });
  expect(pause.budget!.used).toBeCloseTo(0.014, 10);
  const status = await runCli(['status', id], env());
  expect(status.stdout).toContain('run 1 reached its cost budget: $0.0140 of $0.0100');

  const approved = await runCli(['approve', id, 'budget-1', '--raise-usd', '0.05', '--by', 'alice'], env());
  expect(approved.stderr).toBe('');
  expect(approved.code).toBe(0);
  const finished = await waitForEvent(harness().client.workflow.getHandle(id), 'run_finished');
  expect(finished).toMatchObject({ outcome: 'answered', answer: 'Two echoes.' });
  expect(finished.usage?.usd).toBeCloseTo(0.042, 10);
});

test('a dollar budget for a model the worker has no price for is refused at the start, saying why', async () => {
  const id = `conv-${randomUUID()}`;
  await harness().agent.send(id, 'Hello.', { options: { model: 'unpriced-model', budget: { usd: 1 } } });
  const failure = await harness()
    .client.workflow.getHandle(id)
    .result()
    .then(
      () => undefined,
      (error: unknown) => error as Error & { cause?: Error },
    );
  expect(failure?.cause?.message).toBe(
    "refused by the worker: budget.usd needs a price for model unpriced-model in the worker's price table (AGENT_MODEL_PRICES)",
  );
});

/** 15625 fresh input tokens: 15625 × 2 / 1e6 = $0.03125 a call, a power of two, so sums are exact. */
const BINARY_CALL = { prompt: 15_625, completion: 0 };

describe('sub-agents draw from what their parent has left', () => {
  /**
   * The parent starts two sub-agents at once; each would call echo for ever. Five calls' worth of
   * budget: the parent's first call, then two each for the sub-agents, split evenly between them.
   */
  test.each<[string, Budget, number]>([
    ['usd', { usd: 5 * 0.03125 }, 5 * 0.03125],
    ['tokens', { tokens: 5 * 15_625 }, 5 * 15_625],
  ])(
    'a %s budget: two sub-agents in parallel stop at their shares, their tool calls count, the parent pauses within its limit',
    async (kind, budget, limit) => {
      let calls = 0;
      const reply = (request: ChatRequest): ScriptedReply => {
        const task = request.messages.find((message) => message.role === 'user')?.content;
        if (task !== 'Delegate both.') {
          return { toolCalls: [echoCall(`call_echo_${++calls}`)], usage: BINARY_CALL };
        }
        if (request.messages.some((message) => message.role === 'tool'))
          return { text: 'Done.', usage: BINARY_CALL };
        const spawn = (name: string) => ({
          id: `call_${name}`,
          name: 'sessions_spawn',
          arguments: { task: name },
        });
        return { toolCalls: [spawn('task_a'), spawn('task_b')], usage: BINARY_CALL };
      };
      nockModel(Array.from({ length: 16 }, () => reply));
      const id = `conv-${randomUUID()}`;
      await harness().agent.send(id, 'Delegate both.', { options: { budget, maxToolIterations: 5 } });
      const pause = await waitFor<PendingApproval>(
        async () =>
          (await harness().agent.pendingApprovals(id)).find((pending) => pending.toolCallId === 'budget-1'),
        'the parent’s budget pause',
      );
      expect(pause.budget).toMatchObject({ kind, used: limit, limit });
      for (const task of ['task_a', 'task_b']) {
        const child = harness().client.workflow.getHandle(subAgentId(id, `call_${task}`));
        expect(await child.result()).toMatchObject({ outcome: 'budget_exhausted', usage: { toolCalls: 2 } });
      }
      // The parent's two spawns and each sub-agent's two echoes.
      const used = (await harness().agent.status(id)).budget!.used;
      expect(used).toMatchObject({ tokens: 5 * 15_625, toolCalls: 6 });
      expect(used.usd).toBe(5 * 0.03125);
    },
  );
});
