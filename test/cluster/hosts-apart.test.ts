import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
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
import { answersWithTlsHandshake, opensWithTlsHandshake, tcpFlows } from '../support/hosts-apart/pcap';
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

    // What must never cross a link in clear.
    const nonce = randomBytes(6).toString('hex');
    const question = `How many sheep graze on hill ${nonce}?`;
    const answer = `Five sheep graze on hill ${nonce}, counted twice over.`;
    const gatewayToken = `gw-${randomBytes(16).toString('hex')}`;
    const apiKey = `sk-${randomBytes(16).toString('hex')}`;

    const capture = file('links.pcap');
    // Everything crossing the bridge, whole packets, written as they come (-U), as root (-Z) to a file root owns.
    const tcpdump = startIn(
      'bridge',
      ['tcpdump', '-i', net.bridge.device, '-s', '0', '-U', '-Z', 'root', '-w', capture],
      hostEnv({}),
    );
    await tcpdump.matching(/listening on/, 'stderr');

    const certificates = await testCertificates([at('model'), at('gateway')]);
    await writeFile(file('ca.pem'), certificates.ca);
    await writeFile(file('server.pem'), certificates.cert);
    await writeFile(file('server.key'), certificates.key, { mode: 0o600 });

    // The cluster, mTLS only, its services on its host's link address (PostgreSQL on its loopback).
    const clusterDir = file('cluster');
    const frontend = `${at('temporal')}:${FRONTEND_PORT}`;
    const cluster = startIn(
      'temporal',
      [
        process.execPath,
        CLI,
        'cluster',
        'start',
        '--tls',
        '--host',
        at('temporal'),
        '--port',
        String(FRONTEND_PORT),
        '--dir',
        clusterDir,
      ],
      hostEnv({}),
    );
    await cluster.matching(/^\S+$/m);
    expect({
      exit: await Promise.race([cluster.exited, stillRunningAfter(WAIT_MS)]),
      stdout: cluster.output.stdout,
    }).toEqual({
      exit: 0,
      stdout: `${frontend}\n`,
    });
    // A start again keeps the address; moving it waits for the services to stop.
    const again = (...more: string[]) =>
      spawnSync(
        'ip',
        ['netns', 'exec', net.namespaceOf('temporal'), process.execPath, CLI, 'cluster', 'start', ...more],
        { encoding: 'utf8', timeout: WAIT_MS, env: hostEnv({}) },
      );
    expect(again('--dir', clusterDir)).toMatchObject({ status: 0, stdout: `${frontend}\n` });
    const moved = again('--host', '127.0.0.1', '--dir', clusterDir);
    expect(moved).toMatchObject({ status: 1, stdout: '' });
    expect(moved.stderr).toContain(`this cluster's services run on ${at('temporal')}`);
    // The profile the cluster wrote is all the other hosts are given to reach it.
    const profile = path.join(clusterDir, 'tls', 'temporal.toml');
    expect(await readFile(profile, 'utf8')).toContain(`"${frontend}"`);
    const temporalProfile = { TEMPORAL_CONFIG_FILE: profile, TEMPORAL_PROFILE: 'cluster' };

    const answerHold = file('answer-hold');
    await writeFile(answerHold, '');
    const model = startIn(
      'model',
      [process.execPath, '--import', 'tsx', path.join(SUPPORT, 'model-server.ts')],
      hostEnv({
        MODEL_HOST: at('model'),
        MODEL_API_KEY: apiKey,
        MODEL_HOLD: answerHold,
        TLS_CERT: file('server.pem'),
        TLS_KEY: file('server.key'),
        MODEL_SCRIPT: JSON.stringify([
          {
            text: 'Let me count them.',
            toolCalls: [{ id: 'call_count', name: 'slow_count', arguments: { n: 5 } }],
          },
          { text: answer, textChunks: 6, chunkDelayMs: 100 },
        ]),
      }),
    );
    const modelPort = Number((await model.matching(/"port":(\d+)/))[1]);

    const markers = file('markers');
    const workspace = file('workspace');
    await Promise.all(
      [markers, workspace].map((made) => import('node:fs/promises').then((fs) => fs.mkdir(made))),
    );
    // The tool holds until the test lets it go: the first worker is cut off while it runs, however slow the machine.
    await writeFile(path.join(markers, 'hold'), '');
    const worker = (host: 'worker1' | 'worker2') =>
      startIn(
        host,
        [process.execPath, '--import', 'tsx', path.join(SUPPORT, 'worker.ts')],
        hostEnv({
          ...temporalProfile,
          OPENAI_BASE_URL: `https://${at('model')}:${modelPort}/v1`,
          OPENAI_API_KEY: apiKey,
          AGENT_MODEL: 'scripted-model',
          NODE_EXTRA_CA_CERTS: file('ca.pem'),
          // 127.x addresses count as loopback, where the push endpoint would be plain HTTP by default.
          AGENT_LIVE_TLS: 'on',
          AGENT_LIVE_ENDPOINT: `${at(host)}:${LIVE_PORT}`,
          AGENT_LIVE_URL: `https://${at(host)}:${LIVE_PORT}`,
          DURABLE_AGENT_DATA_DIR: file(`${host}-data`),
          WORKER_NAME: host,
          MARKER_DIR: markers,
          WORKSPACE: workspace,
        }),
      );
    const workers = { worker1: worker('worker1'), worker2: worker('worker2') };
    await Promise.all(Object.values(workers).map((started) => started.matching(/^ready$/m)));

    await writeFile(
      file('tokens.json'),
      JSON.stringify({
        tokens: [
          {
            name: 'sheep-service',
            sha256: createHash('sha256').update(gatewayToken).digest('hex'),
            actions: ['*'],
          },
        ],
      }),
    );
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

    const conversationId = `sheep-${nonce}`;
    const client = startIn(
      'client',
      [process.execPath, path.join(SUPPORT, 'client.mjs')],
      hostEnv({
        GATEWAY_URL: `https://${at('gateway')}:${GATEWAY_PORT}`,
        GATEWAY_TOKEN: gatewayToken,
        CONVERSATION_ID: conversationId,
        MESSAGE: question,
        NODE_EXTRA_CA_CERTS: file('ca.pem'),
      }),
    );

    // The tool starts once allowed; its worker's host is then cut off.
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
    await waitFor(
      async () => (streamedTexts().includes(answer) ? true : undefined),
      'the answer streamed to the client',
      WAIT_MS,
    );
    expect(ofType('run_finished')).toEqual([]);
    // And the gateway reads it from the push endpoint of the worker making the call (over the link,
    // as the capture shows while it is written) before the call may end.
    await waitFor(
      async () =>
        tcpFlows(await readFile(capture)).some(
          (flow) =>
            flow.from === `${at(survivor)}:${LIVE_PORT}` &&
            flow.to.startsWith(`${at('gateway')}:`) &&
            flow.payload.length > 0,
        )
          ? true
          : undefined,
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

    tcpdump.child.kill('SIGINT');
    await Promise.race([tcpdump.exited, stillRunningAfter(10_000)]);
    const raw = await readFile(capture);
    const flows = tcpFlows(raw);
    // A hop: the connections from one host to a port of another, each with both its directions.
    const hop = (from: Host, to: Host, port: number) =>
      flows
        .filter((flow) => flow.from.startsWith(`${at(from)}:`) && flow.to === `${at(to)}:${port}`)
        .map((sent) => ({
          sent,
          answered: flows.find((flow) => flow.from === sent.to && flow.to === sent.from),
        }));
    const hops: Array<[string, ReturnType<typeof hop>]> = [
      ['client to gateway', hop('client', 'gateway', GATEWAY_PORT)],
      ['gateway to Temporal', hop('gateway', 'temporal', FRONTEND_PORT)],
      ['worker1 to Temporal', hop('worker1', 'temporal', FRONTEND_PORT)],
      ['worker2 to Temporal', hop('worker2', 'temporal', FRONTEND_PORT)],
      [
        'workers to the model',
        [...hop('worker1', 'model', modelPort), ...hop('worker2', 'model', modelPort)],
      ],
      [
        "gateway to a worker's push endpoint",
        [...hop('gateway', 'worker1', LIVE_PORT), ...hop('gateway', 'worker2', LIVE_PORT)],
      ],
    ];
    // Every hop is in the capture, each of its connections a TLS handshake both ways, and more
    // than a handshake crossed it (the capture is of the traffic, not of connections that failed).
    const summary = hops.map(([name, connections]) => ({
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
    expect(summary).toEqual(
      hops.map(([name]) => ({ name, captured: true, tls: true, beyondHandshake: true })),
    );
    // The worker that finished the tool made the model call after it.
    expect(hop(survivor, 'model', modelPort).length).toBeGreaterThan(0);
    // Nothing else crossed the links.
    const accounted = new Set(
      hops.flatMap(([, connections]) => connections.flatMap(({ sent, answered }) => [sent, answered])),
    );
    expect(flows.filter((flow) => !accounted.has(flow)).map((flow) => `${flow.from} > ${flow.to}`)).toEqual(
      [],
    );
    // And nothing readable: not the conversation, not the gateway's token, not the model's key.
    const secrets = { question, answer, nonce, gatewayToken, apiKey };
    const readable = Object.entries(secrets).flatMap(([name, secret]) => [
      ...(raw.includes(secret) ? [`${name} in the capture`] : []),
      ...flows
        .filter((flow) => flow.payload.includes(secret))
        .map((flow) => `${name} from ${flow.from} to ${flow.to}`),
    ]);
    expect(readable).toEqual([]);
  },
  180_000,
);
