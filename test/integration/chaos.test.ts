import { spawn } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

interface ChaosSummary {
  trials: number;
  trialsByKind: Record<string, number>;
  workerKills: number;
  serverKills: number;
  approvalsDecided: number;
  continuedAsNew: number;
  modelFaults: Record<string, number>;
  conversationsLost: number;
  sideEffectsDoubled: number;
  gatewaySends: { retried: number; answeredAsReplays: number };
  messagesTakenTwice: number;
  otherProblems: string[];
}

/** `npm run chaos`, reduced to a few trials of each kind: the same harness, checks and report. */
test('a reduced chaos run: workers and the server killed, model faults injected, approvals, sub-agents and continue-as-new in flight, messages sent through the gateway and retried; no conversation lost, no side effect doubled, no message taken twice', async () => {
  const results = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-chaos-results-'));
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'chaos/run.ts',
      '--trials',
      '10',
      '--seed',
      '424242',
      '--fault-rate',
      '0.4',
      '--server-kills',
      '1',
      '--results',
      results,
    ],
    { cwd: path.join(__dirname, '..', '..'), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`the chaos run failed (${code}):\n${output}`);

  const { summary } = JSON.parse(await readFile(path.join(results, 'chaos.json'), 'utf8')) as {
    summary: ChaosSummary;
  };
  expect(summary).toMatchObject({
    trials: 10,
    conversationsLost: 0,
    sideEffectsDoubled: 0,
    messagesTakenTwice: 0,
    otherProblems: [],
  });
  // The trials' messages went through the gateway, and some were sent again after their answer was
  // lost: those were answered as replays, not taken twice.
  expect(summary.gatewaySends.answeredAsReplays).toBeGreaterThan(0);
  expect(summary.trialsByKind).toEqual({ tools: 3, approval: 3, sub_agent: 2, continue_as_new: 2 });
  expect(summary.workerKills).toBeGreaterThan(0);
  expect(summary.serverKills).toBe(1);
  expect(summary.approvalsDecided).toBe(3);
  expect(summary.continuedAsNew).toBeGreaterThanOrEqual(2);
  expect(Object.values(summary.modelFaults).reduce((sum, count) => sum + count, 0)).toBeGreaterThan(0);
}, 300_000);
