import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { ClusterStatus } from '../../src/temporal-server/cluster/cluster';
import { clusterFiles } from '../../src/temporal-server/cluster/cluster-files';
import { runningAs } from '../../src/temporal-server/cluster/cluster-processes';
import { readClusterState } from '../../src/temporal-server/cluster/cluster-state';
import { OPENSSL_MISSING, opensslAvailable } from '../../src/temporal-server/cluster/openssl-certificates';
import { isListening } from '../../src/platform/free-port';
import { assertCliBuilt, runCli, startCli } from '../support/cli-process';
import { inCi } from '../support/in-ci';
import { startScriptedModelServer } from '../support/scripted-model-server';
import { whatClusterNeeds } from '../support/test-cluster';
import { unclaimedPort } from '../support/unclaimed-port';
import { waitFor } from '../support/test-worker';

const missing = whatClusterNeeds('the cluster test');
// In CI a missing prerequisite fails the run; on a developer's machine the test is skipped, saying why.
if (missing && !inCi()) console.warn(`skipped: ${missing}`);
const whenAvailable = missing && !inCi() ? test.skip : test;
const missingForTls =
  missing ?? (opensslAvailable() ? undefined : `the TLS cluster test: ${OPENSSL_MISSING}`);
if (missingForTls && !missing && !inCi()) console.warn(`skipped: ${missingForTls}`);
const whenTlsAvailable = missingForTls && !inCi() ? test.skip : test;

// The Temporal server is built by the global setup, before any test starts.
beforeAll(() => {
  assertCliBuilt();
  if (missing && inCi()) throw new Error(missing);
});

whenAvailable(
  'cluster start runs PostgreSQL and four Temporal services that serve a conversation, brings back a killed service, and stop leaves nothing running',
  async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-cluster-'));
    const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-cluster-ws-'));
    const model = await startScriptedModelServer([{ text: 'First answer.' }, { text: 'Second answer.' }]);
    const port = await unclaimedPort();
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-cluster-data-'));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DURABLE_AGENT_DATA_DIR: dataDir,
      OPENAI_BASE_URL: model.baseUrl,
      AGENT_MODEL: 'scripted-model',
    };
    delete env.TEMPORAL_ADDRESS;
    const cluster = (...args: string[]) => runCli(['cluster', ...args, '--dir', dir], env);
    const status = async () => {
      const { code, stdout } = await cluster('status', '--json');
      return { code, status: JSON.parse(stdout) as ClusterStatus };
    };
    const running = (report: ClusterStatus) =>
      Object.fromEntries(report.processes.map((process) => [process.name, process.running]));
    let worker: ReturnType<typeof startCli> | undefined;
    try {
      // As a script that waits for the port does: `run` starts the moment the frontend listens,
      // before the cluster has registered its namespace, and waits for it.
      const starting = startCli(['cluster', 'start', '--port', String(port), '--dir', dir], env);
      let listening = false;
      while (!listening) {
        const exited = await Promise.race([starting.done, new Promise((resolve) => setTimeout(resolve, 10))]);
        if (exited) throw new Error(`cluster start exited before listening: ${JSON.stringify(exited)}`);
        listening = await isListening('127.0.0.1', port);
      }
      const clientEnv = { ...env, TEMPORAL_ADDRESS: `127.0.0.1:${port}` };
      const ran = await runCli(
        ['run', '--workspace', workspace, '--id', 'cluster-conversation', 'Hello'],
        clientEnv,
      );
      expect(ran).toMatchObject({ code: 0, stdout: 'First answer.\n' });
      const started = await starting.done;
      // Its stderr says why when it failed.
      expect({ ...started, stderr: started.code === 0 ? '' : started.stderr }).toMatchObject({
        code: 0,
        stdout: `127.0.0.1:${port}\n`,
        stderr: '',
      });

      const before = (await readClusterState(clusterFiles(dir).state))!;
      const history = before.services.history.pid!;
      process.kill(history, 'SIGKILL');
      await waitFor(async () => (runningAs(history, []) ? undefined : true), 'the history service to die');
      const down = await status();
      expect(down.code).toBe(1);
      expect(running(down.status)).toEqual({
        postgres: true,
        frontend: true,
        history: false,
        matching: true,
        worker: true,
      });

      const restarted = await cluster('start');
      expect(restarted).toMatchObject({ code: 0, stdout: `127.0.0.1:${port}\n` });
      expect(restarted.stderr).toMatch(/Starting Temporal [\d.]+: history \(/);
      const after = (await readClusterState(clusterFiles(dir).state))!;
      expect(after.services.history.pid).not.toBe(history);
      // Only what was down was started again.
      for (const service of ['frontend', 'matching', 'worker'] as const) {
        expect(after.services[service].pid).toBe(before.services[service].pid);
      }
      const up = await status();
      expect(up.code).toBe(0);
      expect(up.status.frontend).toMatchObject({ serving: true });

      // The conversation from before the kill goes on, its history kept in PostgreSQL.
      worker = startCli(['worker', '--workspace', workspace], clientEnv);
      await worker.stderrMatching(/worker on task queue/);
      const sent = await runCli(['send', 'cluster-conversation', 'Again'], clientEnv);
      expect(sent).toMatchObject({ code: 0, stdout: 'Second answer.\n' });
      worker.kill('SIGTERM');
      await worker.done;
      worker = undefined;

      const pids = up.status.processes.map((process) => process.pid!);
      expect(pids).toHaveLength(5);
      expect(await cluster('stop')).toMatchObject({ code: 0 });
      expect(pids.filter((pid) => runningAs(pid, []))).toEqual([]);
      const stopped = await status();
      expect(stopped.code).toBe(1);
      expect(Object.values(running(stopped.status))).toEqual([false, false, false, false, false]);
    } finally {
      if (worker) {
        worker.kill('SIGKILL');
        await worker.done;
      }
      await cluster('stop');
      await model.close();
      for (const made of [dir, workspace, dataDir]) await rm(made, { recursive: true, force: true });
    }
  },
  300_000,
);

whenTlsAvailable(
  'cluster start --tls serves mTLS only: a worker and a client configured by nothing but the temporal.toml profile it writes are served, and clients without its certificate are refused',
  async () => {
    if (missingForTls) throw new Error(missingForTls);
    const dir = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-tls-cluster-'));
    const workspace = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-tls-cluster-ws-'));
    const model = await startScriptedModelServer([{ text: 'Answered over mTLS.' }]);
    const port = await unclaimedPort();
    // Nothing of Temporal's connection settings from this process: only what each step gives.
    const env: NodeJS.ProcessEnv = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith('TEMPORAL_')),
    );
    Object.assign(env, {
      DURABLE_AGENT_DATA_DIR: path.join(dir, 'data'),
      OPENAI_BASE_URL: model.baseUrl,
      AGENT_MODEL: 'scripted-model',
    });
    const cluster = (...args: string[]) => runCli(['cluster', ...args, '--dir', dir], env);
    let worker: ReturnType<typeof startCli> | undefined;
    try {
      const started = await cluster('start', '--tls', '--port', String(port));
      expect({ ...started, stderr: started.code === 0 ? '' : started.stderr }).toMatchObject({
        code: 0,
        stdout: `127.0.0.1:${port}\n`,
      });
      const profile = path.join(dir, 'tls', 'temporal.toml');
      expect(started.stderr).toContain(
        `clients connect with TEMPORAL_CONFIG_FILE=${profile} TEMPORAL_PROFILE=cluster`,
      );

      // The worker through the variables, the client through the flags: the profile says where and how.
      worker = startCli(['worker', '--workspace', workspace], {
        ...env,
        TEMPORAL_CONFIG_FILE: profile,
        TEMPORAL_PROFILE: 'cluster',
      });
      await worker.stderrMatching(/worker on task queue/);
      const ran = await runCli(
        [
          'run',
          '--no-worker',
          '--workspace',
          workspace,
          '--profile',
          'cluster',
          '--config-file',
          profile,
          '--id',
          'over-mtls',
          'Hello',
        ],
        env,
      );
      // Its stderr says why when it failed.
      expect({ ...ran, stderr: ran.code === 0 ? '' : ran.stderr }).toMatchObject({
        code: 0,
        stdout: 'Answered over mTLS.\n',
        stderr: '',
      });

      // TLS with the cluster's CA but without a client certificate: refused, a worker as a client.
      const withoutCertificate = {
        ...env,
        TEMPORAL_ADDRESS: `127.0.0.1:${port}`,
        TEMPORAL_TLS_SERVER_CA_CERT_PATH: path.join(dir, 'tls', 'ca.pem'),
        TEMPORAL_TLS_SERVER_NAME: 'localhost',
      };
      // Said at once, not waited out as a server still starting.
      const refusal = `the Temporal server at 127.0.0.1:${port} refuses the TLS connection: it requires a client certificate`;
      const refusedWorker = startCli(['worker', '--workspace', workspace], withoutCertificate);
      const polling = await refusedWorker.stderrMatching(/worker on task queue/).then(
        () => true,
        () => false,
      );
      if (polling) refusedWorker.kill('SIGKILL');
      const workerRun = await refusedWorker.done;
      expect({ polling, code: workerRun.code }).toEqual({ polling: false, code: 1 });
      expect(workerRun.stderr).toContain(refusal);
      const refusedClient = await runCli(['status', 'over-mtls'], withoutCertificate);
      expect(refusedClient.code).toBe(1);
      expect(refusedClient.stderr).toContain(refusal);

      const status = await cluster('status', '--json');
      expect(status.code).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({
        healthy: true,
        profile: `TEMPORAL_CONFIG_FILE=${profile} TEMPORAL_PROFILE=cluster`,
      });
    } finally {
      if (worker) {
        worker.kill('SIGTERM');
        await worker.done;
      }
      await cluster('stop');
      await model.close();
      for (const made of [dir, workspace]) await rm(made, { recursive: true, force: true });
    }
  },
  300_000,
);
