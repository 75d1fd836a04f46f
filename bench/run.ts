/**
 * `npm run bench`: every benchmark in one run against one embedded Temporal server, with a
 * scripted model on 127.0.0.1 that answers at once; benches 1, 3 and 8 measure again on a
 * self-hosted cluster (`durable-agent cluster`: PostgreSQL and Temporal's four services) that the
 * run starts in a temporary directory and stops at its end. Each bench prints a table and writes
 * bench/results/<bench>.json; the run ends with bench/results/summary.md, the tables of
 * docs/benchmarks/history.md (summed up in BENCHMARKS.md). Arguments: `--quick` (fewer turns, to
 * try it out), `--only a,b` (bench names: turn, fanout, throughput, control, history, replay, text, crash, uncached, peers, fairness, memory, console, prefix, protocols), `--no-cluster` (the
 * embedded server only), `--server-config KEY=JSON` (a dynamic config value for every embedded
 * server the run starts, repeatable: for experiments; the cluster reads
 * deploy/dynamicconfig/durable-agent.yaml).
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Connection } from '@temporalio/client';
import { DefaultLogger, Runtime, bundleWorkflowCode } from '@temporalio/worker';
import { nodeBinary } from '../scripts/node-binary.mjs';
import { POSTGRES_MISSING, findPostgresBin } from '../src/temporal-server/cluster/postgres-cluster';
import { bundleAgentWorkflows } from '../src/worker/workflow-bundle';
import { consoleScale } from './console-scale';
import { controlLatency } from './control-latency';
import { crashRecovery } from './crash-recovery';
import { fairness } from './fairness';
import { fanOut } from './fan-out';
import { peers } from './peers';
import { prefixStability } from './prefix-stability';
import { firstText } from './first-text';
import { historyGrowth } from './history-growth';
import { protocolFirstText } from './protocol-first-text';
import { replay } from './replay';
import { type BenchContext, connectTo } from './support/context';
import { AnswerHub } from './support/driven-conversation';
import { startBenchModelServer } from './support/model-server';
import {
  type BenchCluster,
  startBenchCluster,
  startBenchServer,
  stopAllBenchServers,
} from './support/server';
import { REPO_ROOT } from './support/worker-process';
import { throughput } from './throughput';
import { turnOverhead } from './turn-overhead';
import { uncachedResponse } from './uncached-response';
import { workflowMemory } from './workflow-memory';

const RESULTS_DIR = path.join(REPO_ROOT, 'bench', 'results');
/** The peers' packages, each with its own dependencies and lockfile. */
const PEER_PACKAGES = ['ai-sdk-peer', 'restate-peer', 'dbos-peer', 'langgraph-peer'];
/** The Node the peers that need Node 22 run on (@temporalio/ai-sdk, Restate's SDK, LangChain's OpenAI client). */
const PEER_NODE_VERSION = '22.23.3';

const BENCHES: Array<{
  name: string;
  title: string;
  run: (context: BenchContext) => Promise<{ table: string }>;
  /** Measures on the cluster too (`serversToMeasure`): the run starts one when such a bench is selected. */
  onCluster?: true;
}> = [
  { name: 'turn', title: '1. Turn overhead', run: turnOverhead, onCluster: true },
  { name: 'fanout', title: '2. Fan-out', run: fanOut },
  { name: 'throughput', title: '3. Throughput and worker memory', run: throughput, onCluster: true },
  { name: 'control', title: '4. Control latency', run: controlLatency },
  { name: 'history', title: '5. History growth', run: historyGrowth },
  { name: 'replay', title: '6. Replay', run: replay },
  { name: 'text', title: '7. First text', run: firstText },
  { name: 'crash', title: '8. Crash recovery', run: crashRecovery, onCluster: true },
  { name: 'uncached', title: '9. Uncached first response', run: uncachedResponse },
  // On the cluster: the Temporal stacks meet the other engines on a durable store (PostgreSQL).
  { name: 'peers', title: '10. Peer engines', run: peers, onCluster: true },
  { name: 'fairness', title: '11. Fairness under a fleet model limit', run: fairness },
  { name: 'memory', title: '12. Memory per cached workflow', run: workflowMemory },
  { name: 'console', title: '13. Console at scale', run: consoleScale },
  { name: 'prefix', title: '14. Stable prompt prefixes', run: prefixStability },
  { name: 'protocols', title: '15. MCP, A2A and AG-UI beside the event stream', run: protocolFirstText },
];

interface Options {
  quick: boolean;
  only: Set<string> | undefined;
  /** Start a cluster for the benches that measure on one (`--no-cluster`: false). */
  cluster: boolean;
  serverConfig: Record<string, unknown>;
}

function parseArguments(argv: string[]): Options {
  const options: Options = { quick: false, only: undefined, cluster: true, serverConfig: {} };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--quick') options.quick = true;
    else if (arg === '--no-cluster') options.cluster = false;
    else if (arg === '--only') options.only = new Set((argv[++i] ?? '').split(','));
    else if (arg === '--server-config') {
      const [key, ...value] = (argv[++i] ?? '').split('=');
      if (!key || value.length === 0) throw new Error('--server-config takes KEY=VALUE (a JSON value)');
      options.serverConfig[key] = JSON.parse(value.join('='));
    } else throw new Error(`unknown argument ${arg}`);
  }
  const unknown = [...(options.only ?? [])].filter((name) => !BENCHES.some((bench) => bench.name === name));
  if (unknown.length) throw new Error(`unknown bench ${unknown.join(', ')}`);
  return options;
}

/** The 1, 5 and 15 minute load averages now. */
const loadNow = () => os.loadavg().map((value) => Math.round(value * 100) / 100);

function machine() {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    platform: `${os.platform()} ${os.release()}`,
    node: process.version,
    /** 1, 5 and 15 minute load averages when the run started: other work on the machine skews every number. */
    loadAverageAtStart: loadNow(),
  };
}

/**
 * Installs a peer's own dependencies (its lockfile, with the peers' Node first on PATH) unless every
 * one is there at its pinned version. A peer that fails to install is reported by the peer bench
 * (its engine cannot start), not here: the run goes on.
 */
async function ensurePeerInstalled(name: string, node: string, log: (line: string) => void): Promise<void> {
  const dir = path.join(REPO_ROOT, 'bench', name);
  const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const installed = Object.entries(manifest.dependencies).every(([dependency, version]) => {
    const file = path.join(dir, 'node_modules', dependency, 'package.json');
    return (
      existsSync(file) && (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version === version
    );
  });
  if (installed) return;
  log(`Installing the peer bench/${name} ...`);
  await new Promise<void>((resolve) => {
    const child = spawn('npm', ['install', '--no-audit', '--no-fund'], {
      cwd: dir,
      stdio: 'inherit',
      shell: process.platform === 'win32',
      env: { ...process.env, PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ''}` },
    });
    child.on('error', (error) => {
      log(`Could not install bench/${name}: ${error.message}`);
      resolve();
    });
    child.on('exit', (code) => {
      if (code !== 0) log(`Could not install bench/${name}: npm install exited ${code}`);
      resolve();
    });
  });
}

async function writeBundle(file: string, code: string): Promise<string> {
  await writeFile(file, code);
  return file;
}

/** What a server says of itself: its version, history shards and stores. */
async function describeServer(connection: Connection): Promise<string> {
  const info = await connection.workflowService.getClusterInfo({});
  return (
    `Temporal server ${info.serverVersion}, ${info.historyShardCount} history ` +
    `shard${info.historyShardCount === 1 ? '' : 's'}, ${info.persistenceStore} store`
  );
}

/** `postgres --version`'s answer, e.g. `PostgreSQL 15.8`. */
function postgresVersion(bin: string): string {
  const answer = execFileSync(path.join(bin, 'postgres'), ['--version'], { encoding: 'utf8' }).trim();
  return answer.replace(/^postgres \(PostgreSQL\) /, 'PostgreSQL ');
}

/** The cluster of the run: how it was set up, or why there is none. */
type ClusterAbout =
  { server: string; postgres: string; startSeconds: number } | { skipped: string } | { error: string };

/**
 * The cluster that benches 1, 3 and 8 measure on beside the embedded server, and the runner's
 * clients of it; none with --no-cluster or without PostgreSQL, or when it fails to start (the
 * embedded server's rows are measured all the same, and the run counts it as a failure). `about`
 * says which.
 */
async function startRunCluster(
  options: Options,
  log: (line: string) => void,
): Promise<{ cluster?: BenchCluster; clients?: Awaited<ReturnType<typeof connectTo>>; about: ClusterAbout }> {
  if (!options.cluster) return { about: { skipped: '--no-cluster.' } };
  const postgresBin = findPostgresBin(process.env);
  if (!postgresBin) {
    log(`No cluster rows: ${POSTGRES_MISSING}`);
    return { about: { skipped: POSTGRES_MISSING } };
  }
  log('Starting a Temporal cluster (PostgreSQL and four services) ...');
  const started = Date.now();
  let cluster: BenchCluster | undefined;
  let clients: Awaited<ReturnType<typeof connectTo>> | undefined;
  try {
    cluster = await startBenchCluster(log);
    clients = await connectTo(cluster.address);
    return {
      cluster,
      clients,
      about: {
        server: await describeServer(clients.connection),
        postgres: postgresVersion(postgresBin),
        startSeconds: Math.round((Date.now() - started) / 100) / 10,
      },
    };
  } catch (error) {
    await clients?.close();
    await cluster?.stop().catch(() => undefined);
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    log(`The cluster FAILED to start (the benches run on the embedded server only): ${message}`);
    return { about: { error: message } };
  }
}

/** The Markdown docs/benchmarks/history.md takes: the machine, then each bench's table. */
function summaryMarkdown(
  about: ReturnType<typeof machine> & {
    temporal: string;
    embeddedServer: string;
    cluster?: ClusterAbout;
    quick: boolean;
    serverConfig: Record<string, unknown>;
  },
  sections: Array<{
    title: string;
    seconds?: number;
    loadAverage?: number[];
    table?: string;
    error?: string;
  }>,
  totalSeconds: number,
): string {
  const load = about.loadAverageAtStart.join(', ');
  const lines = [
    `Run of ${new Date().toISOString().slice(0, 10)}${about.quick ? ' (--quick)' : ''}: ${about.cpu}, ` +
      `${about.cores} cores, ${about.memoryGb} GB, ${about.platform}, Node ${about.node}; ` +
      `load average at the start ${load} (1, 5, 15 min); ${about.temporal}; ${totalSeconds} s in all.`,
  ];
  lines.push('', `Embedded server: ${about.embeddedServer}, in memory, one process.`);
  const cluster = about.cluster;
  if (cluster && 'server' in cluster)
    lines.push(
      '',
      `Cluster (the rows marked "cluster"): ${cluster.server}, ${cluster.postgres}; ` +
        `four services in processes of their own, started in ${cluster.startSeconds} s.`,
    );
  else if (cluster && 'skipped' in cluster) lines.push('', `No cluster rows: ${cluster.skipped}`);
  else if (cluster)
    lines.push('', `No cluster rows: the cluster FAILED to start: ${cluster.error.split('\n')[0]}`);
  if (Object.keys(about.serverConfig).length)
    lines.push('', `Dev server dynamic config: \`${JSON.stringify(about.serverConfig)}\`.`);
  for (const section of sections) {
    lines.push('', `### ${section.title}`, '');
    lines.push(section.table ?? `FAILED: ${section.error?.split('\n')[0]}`);
    if (section.seconds !== undefined)
      lines.push('', `(${section.seconds} s; load average at its end ${section.loadAverage?.join(', ')})`);
  }
  return `${lines.join('\n')}\n`;
}

async function main(): Promise<number> {
  const options = parseArguments(process.argv.slice(2));
  const selected = BENCHES.filter((bench) => !options.only || options.only.has(bench.name));
  const log = (line: string) => console.log(line);
  const began = Date.now();
  const atStart = machine();

  Runtime.install({ logger: new DefaultLogger('ERROR') });
  await mkdir(RESULTS_DIR, { recursive: true });
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-bench-'));
  // Workers and clients share one blob directory, as the large-payload codec requires.
  process.env.DURABLE_AGENT_BLOB_DIR = path.join(scratch, 'blobs');
  // Worker processes make their workspaces there too (support/scratch.ts); it goes at the end.
  process.env.BENCH_SCRATCH_DIR = scratch;

  const peerNode = await nodeBinary(PEER_NODE_VERSION);
  for (const name of PEER_PACKAGES) await ensurePeerInstalled(name, peerNode, log);
  log('Bundling the workflows ...');
  const logger = new DefaultLogger('ERROR');
  const durableBundle = await writeBundle(
    path.join(scratch, 'durable-agent-workflows.js'),
    await bundleAgentWorkflows({ logger }),
  );
  // The bare loop gets Temporal's plain bundle: the project's bundler options are part of durable-agent.
  const bareBundle = await writeBundle(
    path.join(scratch, 'bare.js'),
    (await bundleWorkflowCode({ workflowsPath: require.resolve('./support/bare-workflow'), logger })).code,
  );

  log('Starting the embedded Temporal server and the scripted model ...');
  const server = await startBenchServer({ dynamicConfig: options.serverConfig, log });
  const model = await startBenchModelServer();
  const clients = await connectTo(server.address);
  const about: Parameters<typeof summaryMarkdown>[0] = {
    ...atStart,
    temporal: server.version,
    embeddedServer: await describeServer(clients.connection),
    quick: options.quick,
    serverConfig: options.serverConfig,
  };
  const context: BenchContext = {
    address: clients.address,
    durableClient: clients.durableClient,
    peerClient: clients.peerClient,
    model,
    answers: new AnswerHub(model),
    durableBundle,
    // The peer's worker bundles its workflows (with its own Temporal SDK) here the first time.
    peerBundle: path.join(scratch, 'ai-sdk-peer-workflows.js'),
    peerNode,
    bareBundle,
    serverConfig: options.serverConfig,
    quick: options.quick,
    log,
  };

  const sections: Array<{
    name: string;
    title: string;
    seconds?: number;
    loadAverage?: number[];
    table?: string;
    error?: string;
  }> = [];
  let cluster: BenchCluster | undefined;
  let clusterClients: Awaited<ReturnType<typeof connectTo>> | undefined;
  let stopFailure: unknown;
  try {
    if (selected.some((bench) => bench.onCluster)) {
      const started = await startRunCluster(options, log);
      ({ cluster, clients: clusterClients } = started);
      about.cluster = started.about;
      if (clusterClients) {
        const { address, durableClient, peerClient } = clusterClients;
        context.cluster = { address, durableClient, peerClient };
      }
    }
    for (const bench of selected) {
      log(`\n## ${bench.title}`);
      const started = Date.now();
      let record: Record<string, unknown>;
      try {
        const result = await bench.run(context);
        const seconds = Math.round((Date.now() - started) / 100) / 10;
        log(`\n${result.table}\n\n(${seconds} s)`);
        // Other work on the machine moves the numbers; the run itself adds about 2.
        const loadAverage = loadNow();
        record = { seconds, loadAverageAtEnd: loadAverage, result };
        sections.push({ name: bench.name, title: bench.title, seconds, loadAverage, table: result.table });
      } catch (error) {
        // One bench failing does not lose the others' numbers.
        const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
        log(`\n${bench.name} FAILED: ${message}`);
        record = { error: message };
        sections.push({ name: bench.name, title: bench.title, error: message });
      }
      const file = {
        bench: bench.name,
        title: bench.title,
        finishedAt: new Date().toISOString(),
        about,
        ...record,
      };
      await writeFile(path.join(RESULTS_DIR, `${bench.name}.json`), `${JSON.stringify(file, null, 2)}\n`);
    }
  } finally {
    await clusterClients?.close();
    await clients.close();
    await model.close();
    // Both even if one fails: no process of the run is left.
    const stopped = await Promise.allSettled([server.stop(), ...(cluster ? [cluster.stop()] : [])]);
    await rm(scratch, { recursive: true, force: true });
    for (const outcome of stopped) {
      if (outcome.status === 'rejected') {
        log(`Could not stop a server of the run: ${String(outcome.reason)}`);
        stopFailure ??= outcome.reason;
      }
    }
  }
  if (stopFailure !== undefined) throw stopFailure;
  const totalSeconds = Math.round((Date.now() - began) / 1000);
  const summary = { about, totalSeconds, benches: sections };
  await writeFile(path.join(RESULTS_DIR, 'summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
  await writeFile(path.join(RESULTS_DIR, 'summary.md'), summaryMarkdown(about, sections, totalSeconds));
  const failures =
    sections.filter((section) => section.error).length + (about.cluster && 'error' in about.cluster ? 1 : 0);
  log(
    `\nBenches done in ${totalSeconds} s (${failures} failed); bench/results/ has the JSON and summary.md.`,
  );
  return failures;
}

// An interrupted run stops the servers and the cluster it started (its worker processes stop with it).
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void stopAllBenchServers().finally(() => process.exit(130));
  });
}

main().then(
  (failures) => process.exit(failures ? 1 : 0),
  (error: unknown) => {
    console.error(error);
    void stopAllBenchServers().finally(() => process.exit(1));
  },
);
