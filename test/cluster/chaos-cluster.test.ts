import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { clusterFiles } from '../../src/temporal-server/cluster/cluster-files';
import { runningAs } from '../../src/temporal-server/cluster/cluster-processes';
import { runningPostgres } from '../../src/temporal-server/cluster/postgres-cluster';
import { assertCliBuilt } from '../support/cli-process';
import { inCi } from '../support/in-ci';
import { stopTestCluster, whatClusterNeeds } from '../support/test-cluster';

interface Figures {
  samples: number;
  median: number;
  worst: number;
}

interface ChaosSummary {
  trials: number;
  trialsByKind: Record<string, number>;
  workerKills: number;
  approvalsDecided: number;
  continuedAsNew: number;
  conversationsLost: number;
  sideEffectsDoubled: number;
  otherProblems: string[];
  cluster: {
    faults: Array<{ kind: string; downSeconds: number; restarted: string[]; toProgressSeconds: Figures }>;
    byKind: Record<string, { faults: number; toProgressSeconds: Figures }>;
    downAtEnd: string[];
  };
}

const missing = whatClusterNeeds('the cluster chaos test');
// In CI a missing prerequisite fails the run; on a developer's machine the test is skipped, saying why.
if (missing && !inCi()) console.warn(`skipped: ${missing}`);
const whenAvailable = missing && !inCi() ? test.skip : test;

// The Temporal server is built by the global setup, before any test starts.
beforeAll(() => {
  // The chaos workers run the workflow bundle `npm run build` writes.
  assertCliBuilt();
  if (missing && inCi()) throw new Error(missing);
});

/** Live processes working in `dir` or below it (the services run in DIR, PostgreSQL's in DIR/postgres) or naming it. */
function processesIn(dir: string): string[] {
  const found: string[] = [];
  const within = (file: string) => file === dir || file.startsWith(`${dir}/`);
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const commandLine = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const inDir = within(readlinkSync(`/proc/${pid}/cwd`)) || commandLine.some(within);
      if (inDir && runningAs(Number(pid), [])) found.push(`${pid}: ${commandLine.join(' ')}`);
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

/** The chaos run in progress: stopped (SIGTERM, on which it stops its cluster) if the test times out. */
let running: ChildProcess | undefined;
afterAll(() => {
  if (running?.exitCode === null) running.kill('SIGTERM');
});

/** `npm run chaos -- --cluster`, reduced to two trials of each kind and one fault of each kind. */
whenAvailable(
  'a reduced chaos run on a Temporal cluster: history, matching and the frontend SIGKILLed, PostgreSQL stopped immediately, workers killed; no conversation lost, no side effect doubled, approvals honoured, nothing left running',
  async () => {
    const results = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-chaos-results-'));
    const dir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-chaos-cluster-'));
    try {
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          'chaos/run.ts',
          '--cluster',
          '--cluster-dir',
          dir,
          '--cluster-faults',
          '4',
          '--trials',
          '8',
          '--seed',
          '515151',
          '--results',
          results,
        ],
        { cwd: path.join(__dirname, '..', '..'), stdio: ['ignore', 'pipe', 'pipe'] },
      );
      running = child;
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      if (code !== 0) throw new Error(`the chaos run failed (${code}):\n${output}`);

      const { summary } = JSON.parse(await readFile(path.join(results, 'chaos.json'), 'utf8')) as {
        summary: ChaosSummary;
      };
      expect(summary).toMatchObject({
        trials: 8,
        conversationsLost: 0,
        sideEffectsDoubled: 0,
        otherProblems: [],
      });
      expect(summary.trialsByKind).toEqual({ tools: 2, approval: 2, sub_agent: 2, continue_as_new: 2 });
      expect(summary.approvalsDecided).toBe(2);
      expect(summary.continuedAsNew).toBeGreaterThanOrEqual(2);
      expect(summary.workerKills).toBeGreaterThan(0);
      // One fault of each kind, each brought back, and the conversations running at each went on.
      const { faults, downAtEnd } = summary.cluster;
      expect(faults.map((fault) => fault.kind).sort()).toEqual([
        'frontend',
        'history',
        'matching',
        'postgres',
      ]);
      for (const fault of faults) expect(fault.restarted).toContain(fault.kind);
      expect(faults.reduce((sum, fault) => sum + fault.toProgressSeconds.samples, 0)).toBeGreaterThan(0);
      expect(downAtEnd).toEqual([]);

      // Stopped at the end: no service and no PostgreSQL left running.
      expect(runningPostgres(clusterFiles(dir))).toBeUndefined();
      expect(processesIn(dir)).toEqual([]);
    } finally {
      // A run that failed half-way may have left its cluster running.
      await stopTestCluster(dir, () => undefined).catch(() => undefined);
      for (const made of [dir, results]) await rm(made, { recursive: true, force: true });
    }
  },
  300_000,
);
