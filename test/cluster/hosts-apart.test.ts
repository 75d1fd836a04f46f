import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { OPENSSL_MISSING, opensslAvailable } from '../../src/temporal-server/cluster/openssl-certificates';
import { CLI, assertCliBuilt } from '../support/cli-process';
import {
  type HostsNetwork,
  makeHostsNetwork,
  namespaceExists,
  whatNamespacesNeed,
} from '../support/hosts-apart/network-namespaces';
import {
  type TcpFlow,
  answersWithTlsHandshake,
  opensWithTlsHandshake,
  tcpFlows,
} from '../support/hosts-apart/pcap';
import { inCi } from '../support/in-ci';
import { whatClusterNeeds } from '../support/test-cluster';
import { testCertificates } from '../support/test-certificates';
import { waitFor } from '../support/test-worker';

// The production shape across machines: the Temporal cluster (mTLS), the model's endpoint, two
// workers, the gateway and a service that uses it, each on a host of its own (a network namespace
// with one address), joined by virtual links; tcpdump records what crosses them.
const WHAT = 'the hosts-apart test';
function whatIsMissing(): string | undefined {
  const namespaces = whatNamespacesNeed(WHAT);
  if (namespaces) return namespaces;
  if (spawnSync('tcpdump', ['--version']).error) {
    return `${WHAT} captures the links' traffic with tcpdump, which is missing (apt-get install tcpdump)`;
  }
  if (!opensslAvailable()) return `${WHAT}: ${OPENSSL_MISSING}`;
  return whatClusterNeeds(WHAT);
}
const missing = whatIsMissing();
// In CI a missing prerequisite fails the run; on a developer's machine the test is skipped, saying why.
if (missing && !inCi()) console.warn(`skipped: ${missing}`);
const whenAvailable = missing && !inCi() ? test.skip : test;

const HOSTS = ['temporal', 'model', 'worker1', 'worker2', 'gateway', 'client'] as const;
type Host = (typeof HOSTS)[number];
const FRONTEND_PORT = 7233;
const LIVE_PORT = 7290;
const GATEWAY_PORT = 8787;
const SUPPORT = path.join(__dirname, '../support/hosts-apart');
/**
 * Bytes both ways on a hop beyond which it carried more than a TLS handshake (one with a certificate
 * is about 1.4 KB; the smallest hop here, the push endpoint's, carries over 2 KB a model call).
 */
const MIN_HOP_BYTES = 2_000;
/** Every wait of this test is bounded by this. */
const WAIT_MS = 90_000;

interface Started {
  child: ChildProcess;
  output: { stdout: string; stderr: string };
  /** Resolves with the first match of `pattern` in stdout (or stderr); rejects if it exits first or after WAIT_MS. */
  matching(pattern: RegExp, stream?: 'stdout' | 'stderr'): Promise<RegExpExecArray>;
  exited: Promise<number | null>;
}

let network: HostsNetwork | undefined;
let dir: string | undefined;
const children: ChildProcess[] = [];

/** `argv` in a host's namespace, its output kept and watched. */
function startIn(host: Host | 'bridge', argv: readonly string[], env: NodeJS.ProcessEnv): Started {
  const [command, ...args] =
    host === 'bridge'
      ? ['ip', 'netns', 'exec', network!.bridge.namespace, ...argv]
      : network!.inHost(host, argv);
  const child = spawn(command!, args, {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    cwd: path.join(__dirname, '../..'),
  });
  children.push(child);
  const output = { stdout: '', stderr: '' };
  const listeners = new Set<() => void>();
  for (const stream of ['stdout', 'stderr'] as const) {
    child[stream]!.setEncoding('utf8');
    child[stream]!.on('data', (chunk: string) => {
      output[stream] += chunk;
      for (const listener of listeners) listener();
    });
  }
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const matching = (pattern: RegExp, stream: 'stdout' | 'stderr' = 'stdout') =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const timer = setTimeout(() => fail(`not after ${WAIT_MS / 1000} s`), WAIT_MS);
      const fail = (why: string) => {
        listeners.delete(check);
        clearTimeout(timer);
        reject(
          new Error(
            `${host}: ${argv.join(' ')}: no ${pattern} (${why}); stderr:\n${output.stderr.slice(-3000)}`,
          ),
        );
      };
      const check = () => {
        const match = pattern.exec(output[stream]);
        if (match) {
          listeners.delete(check);
          clearTimeout(timer);
          resolve(match);
        }
      };
      listeners.add(check);
      void exited.then((code) => fail(`exited ${code}`));
      check();
    });
  return { child, output, matching, exited };
}

/** Resolves after `ms` (without keeping the process alive): the bound of a wait for an exit. */
function stillRunningAfter(ms: number): Promise<'still running'> {
  return new Promise((resolve) => setTimeout(() => resolve('still running'), ms).unref());
}

/** This process's environment without its Temporal settings or proxies: each host gets only its own. */
function hostEnv(more: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(TEMPORAL_|TEST_TEMPORAL_|https?_proxy$)/i.test(name)),
  );
  return { ...env, ...more };
}

afterAll(async () => {
  if (network && dir) {
    // The cluster's services and PostgreSQL stopped as they should be; whatever is left is killed with its namespace.
    const stop = spawnSync(
      'ip',
      [
        'netns',
        'exec',
        network.namespaceOf('temporal'),
        process.execPath,
        CLI,
        'cluster',
        'stop',
        '--dir',
        path.join(dir, 'cluster'),
      ],
      { timeout: 60_000 },
    );
    if (stop.status !== 0) console.warn(`cluster stop: ${stop.stderr?.toString()}`);
  }
  for (const child of children) child.kill('SIGKILL');
  network?.remove();
  if (dir) await rm(dir, { recursive: true, force: true });
  const left = network?.namespaces.filter(namespaceExists) ?? [];
  if (left.length > 0) throw new Error(`network namespaces left behind: ${left.join(', ')}`);
});

/** The test's hosts, and its files (shared by every host, as a volume would be). */
interface Setup {
  net: HostsNetwork;
  at(host: Host): string;
  file(name: string): string;
}

/** What must never cross a link in clear. */
interface Secrets {
  nonce: string;
  question: string;
  answer: string;
  gatewayToken: string;
  apiKey: string;
}

/** tcpdump on the bridge: everything crossing it, whole packets, written as they come (-U), as root (-Z) to a file root owns. */
async function startCapture({ net, file }: Setup): Promise<{ tcpdump: Started; capture: string }> {
  const capture = file('links.pcap');
  const tcpdump = startIn(
    'bridge',
    ['tcpdump', '-i', net.bridge.device, '-s', '0', '-U', '-Z', 'root', '-w', capture],
    hostEnv({}),
  );
  await tcpdump.matching(/listening on/, 'stderr');
  return { tcpdump, capture };
}

/**
 * The cluster, mTLS only, its services on its host's link address (PostgreSQL on its loopback).
 * Returns the variables naming the profile it wrote, all the other hosts are given to reach it.
 */
async function startTlsCluster({ at, file }: Setup): Promise<Record<string, string>> {
  const clusterDir = file('cluster');
  const frontend = `${at('temporal')}:${FRONTEND_PORT}`;
  const start = (...args: string[]) =>
    startIn(
      'temporal',
      [process.execPath, CLI, 'cluster', 'start', ...args, '--dir', clusterDir],
      hostEnv({}),
    );
  const cluster = start('--tls', '--host', at('temporal'), '--port', String(FRONTEND_PORT));
  await cluster.matching(/^\S+$/m);
  expect({
    exit: await Promise.race([cluster.exited, stillRunningAfter(WAIT_MS)]),
    stdout: cluster.output.stdout,
  }).toEqual({ exit: 0, stdout: `${frontend}\n` });
  // A start again keeps the address; moving it waits for the services to stop.
  const again = start();
  expect({
    exit: await Promise.race([again.exited, stillRunningAfter(WAIT_MS)]),
    stdout: again.output.stdout,
  }).toEqual({
    exit: 0,
    stdout: `${frontend}\n`,
  });
  const moved = start('--host', '127.0.0.1');
  expect({
    exit: await Promise.race([moved.exited, stillRunningAfter(WAIT_MS)]),
    stdout: moved.output.stdout,
  }).toEqual({ exit: 1, stdout: '' });
  expect(moved.output.stderr).toContain(`this cluster's services run on ${at('temporal')}`);
  const profile = path.join(clusterDir, 'tls', 'temporal.toml');
  expect(await readFile(profile, 'utf8')).toContain(`"${frontend}"`);
  return { TEMPORAL_CONFIG_FILE: profile, TEMPORAL_PROFILE: 'cluster' };
}

/**
 * The model's endpoint over HTTPS, which answers only its API key: a tool call, then the answer,
 * whose stream ends only once `answerHold` is gone.
 */
async function startModel(
  { at, file }: Setup,
  secrets: Secrets,
  answerHold: string,
): Promise<{ model: Started; modelPort: number }> {
  const model = startIn(
    'model',
    [process.execPath, '--import', 'tsx', path.join(SUPPORT, 'model-server.ts')],
    hostEnv({
      MODEL_HOST: at('model'),
      MODEL_API_KEY: secrets.apiKey,
      MODEL_HOLD: answerHold,
      TLS_CERT: file('server.pem'),
      TLS_KEY: file('server.key'),
      MODEL_SCRIPT: JSON.stringify([
        {
          text: 'Let me count them.',
          toolCalls: [{ id: 'call_count', name: 'slow_count', arguments: { n: 5 } }],
        },
        { text: secrets.answer, textChunks: 6, chunkDelayMs: 100 },
      ]),
    }),
  );
  return { model, modelPort: Number((await model.matching(/"port":(\d+)/))[1]) };
}

/** A worker on its host: the cluster's profile, the model's endpoint and key, its push endpoint over TLS. */
function startWorker(
  { at, file }: Setup,
  host: 'worker1' | 'worker2',
  env: { temporalProfile: Record<string, string>; modelPort: number; apiKey: string; markers: string },
): Started {
  return startIn(
    host,
    [process.execPath, '--import', 'tsx', path.join(SUPPORT, 'worker.ts')],
    hostEnv({
      ...env.temporalProfile,
      OPENAI_BASE_URL: `https://${at('model')}:${env.modelPort}/v1`,
      OPENAI_API_KEY: env.apiKey,
      AGENT_MODEL: 'scripted-model',
      NODE_EXTRA_CA_CERTS: file('ca.pem'),
      // 127.x addresses count as loopback, where the push endpoint would be plain HTTP by default.
      AGENT_LIVE_TLS: 'on',
      AGENT_LIVE_ENDPOINT: `${at(host)}:${LIVE_PORT}`,
      AGENT_LIVE_URL: `https://${at(host)}:${LIVE_PORT}`,
      DURABLE_AGENT_DATA_DIR: file(`${host}-data`),
      WORKER_NAME: host,
      MARKER_DIR: env.markers,
      WORKSPACE: file('workspace'),
    }),
  );
}

/** The gateway over HTTPS, with one token that may do anything. */
async function startGateway(
  { at, file }: Setup,
  temporalProfile: Record<string, string>,
  gatewayToken: string,
): Promise<void> {
  const tokens = [
    {
      name: 'sheep-service',
      sha256: createHash('sha256').update(gatewayToken).digest('hex'),
      actions: ['*'],
    },
  ];
  await writeFile(file('tokens.json'), JSON.stringify({ tokens }));
  const gateway = startIn(
    'gateway',
    [
      process.execPath,
      CLI,
      'gateway',
      '--tokens',
      file('tokens.json'),
      '--host',
      at('gateway'),
      '--port',
      String(GATEWAY_PORT),
      '--tls-cert',
      file('server.pem'),
      '--tls-key',
      file('server.key'),
    ],
    hostEnv({ ...temporalProfile, DURABLE_AGENT_DATA_DIR: file('gateway-data') }),
  );
  await gateway.matching(/gateway listening on/, 'stderr');
}

/** The events the client printed so far, and the text of each model call as it streamed to it. */
function clientEvents(client: Started) {
  const seen = () =>
    client.output.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown> & { type?: string });
  const ofType = (type: string) => seen().filter((event) => event.type === type);
  const streamedTexts = () => {
    const calls = new Map<string, string>();
    for (const event of ofType('model_text')) {
      const call = String(event.call);
      calls.set(call, (calls.get(call) ?? '').slice(0, Number(event.offset)) + String(event.text));
    }
    return [...calls.values()];
  };
  return { seen, ofType, streamedTexts };
}

interface Connection {
  sent: TcpFlow;
  answered: TcpFlow | undefined;
}

/** Each hop of the test's traffic: the connections from hosts to a port of another, each with both its directions. */
function hopsOf(
  flows: TcpFlow[],
  at: (host: Host) => string,
  modelPort: number,
): Array<[string, Connection[]]> {
  const hop = (from: Host, to: Host, port: number) =>
    flows
      .filter((flow) => flow.from.startsWith(`${at(from)}:`) && flow.to === `${at(to)}:${port}`)
      .map((sent) => ({
        sent,
        answered: flows.find((flow) => flow.from === sent.to && flow.to === sent.from),
      }));
  return [
    ['client to gateway', hop('client', 'gateway', GATEWAY_PORT)],
    ['gateway to Temporal', hop('gateway', 'temporal', FRONTEND_PORT)],
    ['worker1 to Temporal', hop('worker1', 'temporal', FRONTEND_PORT)],
    ['worker2 to Temporal', hop('worker2', 'temporal', FRONTEND_PORT)],
    ['workers to the model', [...hop('worker1', 'model', modelPort), ...hop('worker2', 'model', modelPort)]],
    [
      "gateway to a worker's push endpoint",
      [...hop('gateway', 'worker1', LIVE_PORT), ...hop('gateway', 'worker2', LIVE_PORT)],
    ],
  ];
}

/**
 * Whether each hop is in the capture, each of its connections a TLS handshake both ways, and more
 * than a handshake crossed it (the capture is of the traffic, not of connections that failed).
 */
function hopSummary(hops: Array<[string, Connection[]]>) {
  return hops.map(([name, connections]) => ({
    name,
    captured: connections.length > 0,
    tls: connections.every(
      ({ sent, answered }) =>
        opensWithTlsHandshake(sent.payload) &&
        answered !== undefined &&
        answersWithTlsHandshake(answered.payload),
    ),
    beyondHandshake:
      connections.reduce(
        (sum, { sent, answered }) => sum + sent.payload.length + (answered?.payload.length ?? 0),
        0,
      ) > MIN_HOP_BYTES,
  }));
}

/** Each secret found readable, in the raw capture or in a connection's payload (a secret split between packets). */
function readableSecrets(raw: Buffer, flows: TcpFlow[], secrets: Secrets): string[] {
  return Object.entries(secrets).flatMap(([name, secret]) => [
    ...(raw.includes(secret) ? [`${name} in the capture`] : []),
    ...flows
      .filter((flow) => flow.payload.includes(secret))
      .map((flow) => `${name} from ${flow.from} to ${flow.to}`),
  ]);
}

/**
 * Stops the capture and checks it: every hop there and TLS, nothing else on the links, and no
 * secret readable.
 */
async function expectCaptureClean(
  { tcpdump, capture }: { tcpdump: Started; capture: string },
  at: (host: Host) => string,
  { modelPort, survivor, secrets }: { modelPort: number; survivor: Host; secrets: Secrets },
): Promise<void> {
  tcpdump.child.kill('SIGINT');
  await Promise.race([tcpdump.exited, stillRunningAfter(10_000)]);
  const raw = await readFile(capture);
  const flows = tcpFlows(raw);
  const hops = hopsOf(flows, at, modelPort);
  expect(hopSummary(hops)).toEqual(
    hops.map(([name]) => ({ name, captured: true, tls: true, beyondHandshake: true })),
  );
  // The worker that finished the tool made the model call after it.
  expect(
    flows.some(
      (flow) => flow.from.startsWith(`${at(survivor)}:`) && flow.to === `${at('model')}:${modelPort}`,
    ),
  ).toBe(true);
  // Nothing else crossed the links.
  const accounted = new Set(
    hops.flatMap(([, connections]) => connections.flatMap(({ sent, answered }) => [sent, answered])),
  );
  expect(flows.filter((flow) => !accounted.has(flow)).map((flow) => `${flow.from} > ${flow.to}`)).toEqual([]);
  // And nothing readable: not the conversation, not the gateway's token, not the model's key.
  expect(readableSecrets(raw, flows, secrets)).toEqual([]);
}

whenAvailable(
  'hosts apart: streamed text, an approval through the gateway, a worker cut off mid-tool and the other finishing it, and nothing readable on the links',
  async () => {
    if (missing) throw new Error(missing);
    assertCliBuilt();
    network = makeHostsNetwork(HOSTS);
    const net = network;
    const at = (host: Host) => net.addressOf(host);
    dir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-hosts-apart-'));
    const file = (name: string) => path.join(dir!, name);
    const setup: Setup = { net, at, file };
    const nonce = randomBytes(6).toString('hex');
    const secrets: Secrets = {
      nonce,
      question: `How many sheep graze on hill ${nonce}?`,
      answer: `Five sheep graze on hill ${nonce}, counted twice over.`,
      gatewayToken: `gw-${randomBytes(16).toString('hex')}`,
      apiKey: `sk-${randomBytes(16).toString('hex')}`,
    };
    const { answer } = secrets;

    const { tcpdump, capture } = await startCapture(setup);
    const certificates = await testCertificates([at('model'), at('gateway')]);
    await writeFile(file('ca.pem'), certificates.ca);
    await writeFile(file('server.pem'), certificates.cert);
    await writeFile(file('server.key'), certificates.key, { mode: 0o600 });
    const temporalProfile = await startTlsCluster(setup);
    const answerHold = file('answer-hold');
    await writeFile(answerHold, '');
    const { model, modelPort } = await startModel(setup, secrets, answerHold);
    const markers = file('markers');
    await Promise.all([mkdir(markers), mkdir(file('workspace'))]);
    // The tool holds until the test lets it go: its worker is cut off while it runs, however slow the machine.
    await writeFile(path.join(markers, 'hold'), '');
    const workerEnv = { temporalProfile, modelPort, apiKey: secrets.apiKey, markers };
    const workers = [startWorker(setup, 'worker1', workerEnv), startWorker(setup, 'worker2', workerEnv)];
    await Promise.all(workers.map((started) => started.matching(/^ready$/m)));
    await startGateway(setup, temporalProfile, secrets.gatewayToken);
    const client = startIn(
      'client',
      [process.execPath, path.join(SUPPORT, 'client.mjs')],
      hostEnv({
        GATEWAY_URL: `https://${at('gateway')}:${GATEWAY_PORT}`,
        GATEWAY_TOKEN: secrets.gatewayToken,
        CONVERSATION_ID: `sheep-${nonce}`,
        MESSAGE: secrets.question,
        NODE_EXTRA_CA_CERTS: file('ca.pem'),
      }),
    );

    // The tool starts once allowed through the gateway; its worker's host is then cut off.
    const attempts = async () =>
      (await readFile(path.join(markers, 'attempts'), 'utf8').catch(() => '')).split('\n').filter(Boolean);
    const [first] = await waitFor(
      async () => ((await attempts()).length > 0 ? await attempts() : undefined),
      'the tool to start',
      WAIT_MS,
    );
    const cutOff = first!.split(' ')[0] as 'worker1' | 'worker2';
    const survivor = cutOff === 'worker1' ? 'worker2' : 'worker1';
    net.cut(cutOff);
    // Its heartbeats stop reaching Temporal: the attempt times out and the other worker runs it again.
    const second = await waitFor(
      async () => (await attempts())[1],
      'the tool to start again on the other worker',
      WAIT_MS,
    );
    expect(second).toBe(`${survivor} call_count`);
    await rm(path.join(markers, 'hold'));

    // The answer's text reaches the client while the model call still runs: streamed, not told at the end.
    const { seen, ofType, streamedTexts } = clientEvents(client);
    await waitFor(
      async () => (streamedTexts().includes(answer) ? true : undefined),
      'the answer streamed to the client',
      WAIT_MS,
    );
    expect(ofType('run_finished')).toEqual([]);
    // And the gateway reads it from the push endpoint of the worker making the call (over the link,
    // as the capture shows while it is written) before the call may end.
    const pushing = (flow: TcpFlow) =>
      flow.from === `${at(survivor)}:${LIVE_PORT}` &&
      flow.to.startsWith(`${at('gateway')}:`) &&
      flow.payload.length > 0;
    await waitFor(
      async () => (tcpFlows(await readFile(capture)).some(pushing) ? true : undefined),
      "the gateway to connect to the worker's push endpoint",
      WAIT_MS,
    );
    await rm(answerHold);

    const clientExit = await Promise.race([client.exited, stillRunningAfter(WAIT_MS)]);
    expect({ exit: clientExit, stderr: client.output.stderr }).toEqual({ exit: 0, stderr: '' });
    expect(ofType('run_finished')).toEqual([expect.objectContaining({ outcome: 'answered', answer })]);
    // Asked once, decided once through the gateway by the token's identity, and not asked again on the other worker.
    expect(ofType('approval_requested')).toHaveLength(1);
    expect(ofType('approval_decided')).toEqual([
      expect.objectContaining({ toolCallId: 'call_count', decision: 'allow_once', by: 'sheep-service' }),
    ]);
    expect(seen().filter((line) => 'decided' in line)).toHaveLength(1);
    expect(ofType('tool_execution_end')).toEqual([
      expect.objectContaining({
        toolCallId: 'call_count',
        isError: false,
        preview: expect.stringContaining(`counted to 5 on ${survivor}`),
      }),
    ]);
    // The model got the result from the worker that finished it, with the key that crossed a link.
    const requests = model.output.stdout.split('\n').filter((line) => line.startsWith('{"messages"'));
    expect(requests).toHaveLength(2);
    expect(requests[1]).toContain(`counted to 5 on ${survivor}`);
    expect(model.output.stdout).not.toContain('{"unauthorized"');

    await expectCaptureClean({ tcpdump, capture }, at, { modelPort, survivor, secrets });
  },
  180_000,
);
