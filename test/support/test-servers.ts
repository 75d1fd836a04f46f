import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import {
  findOrBuildTemporalServer,
  findOrBuildTemporalUiServer,
} from '../../src/temporal-server/cluster/temporal-server-build';
import { goEnvironment } from '../../src/temporal-server/temporal-cli';
import { inCi } from './in-ci';
import { findTestTemporalCli } from './test-run';
import { missingCommands as timeSkippingMissing, whatIsMissing } from './time-skipping-server';

/**
 * The programs the tests run besides Node, made ready by jest's global setup before any test's
 * clock starts, so that a test only finds them: a first build from the Go module proxy without a
 * warm Go cache takes longer than any hook may. Each is built or fetched once into .tools/ and
 * found there at once afterwards. A build that fails fails the run, saying why; a program this
 * machine cannot build (no Go, no Java) is left out, and the tests that need it say so and skip,
 * or fail in CI.
 */
export type TestServer =
  | 'temporal-server'
  | 'temporal-cli'
  | 'temporal-ui-server'
  | 'versitygw'
  | 'helm'
  | 'time-skipping-server'
  | 'kubernetes-validate'
  | 'a2a-python-sdk';

/** Every program a run of the whole suite may start. */
export const EVERY_TEST_SERVER: readonly TestServer[] = [
  'temporal-server',
  'temporal-cli',
  'temporal-ui-server',
  'versitygw',
  'helm',
  'time-skipping-server',
  'kubernetes-validate',
  'a2a-python-sdk',
];

export interface PreparedTestServers {
  /** The `temporal` CLI, where one was found or built. */
  temporalCli?: string;
}

const SCRIPTS = path.resolve(__dirname, '..', '..', 'scripts');

export interface Preparation {
  /** What it is, for the console. */
  name: string;
  /** Which tests need it, for the console. */
  usedBy: string;
  /**
   * Built by `go install`, which already keeps every core busy: these run one after another, so a
   * package two of them share is compiled once, into the Go build cache, and found by the second.
   */
  go: boolean;
  /**
   * Finds it, else builds or fetches it, each step said through `progress` (nothing is said when
   * it is found); `note` says why it is left out.
   */
  prepare(
    progress: (line: string) => void,
    note: (line: string) => void,
    prepared: PreparedTestServers,
  ): Promise<void>;
}

/** What a developer's run does without a program; a CI run fails instead (in-ci.ts). */
const withoutIt = (instead: string) => (inCi() ? 'fail' : instead);

const PREPARATIONS: Record<TestServer, Preparation> = {
  'temporal-server': {
    name: 'the Temporal server',
    usedBy: 'the dev server of every integration test, and the cluster',
    go: true,
    prepare: async (progress) => {
      await findOrBuildTemporalServer(process.env, progress);
    },
  },
  'temporal-cli': {
    name: 'the Temporal CLI',
    usedBy: 'the tests that signal a conversation as an operator would',
    go: true,
    prepare: async (progress, note, prepared) => {
      prepared.temporalCli = await findTestTemporalCli(progress);
      if (!prepared.temporalCli)
        note('no Temporal CLI, and no Go to build one: the tests that run `temporal` fail');
    },
  },
  'temporal-ui-server': {
    name: "Temporal's Web UI server",
    usedBy: "the tests of the embedded server's Web UI",
    go: true,
    prepare: async (progress) => {
      await findOrBuildTemporalUiServer(process.env, progress);
    },
  },
  versitygw: {
    name: 'versitygw',
    usedBy: 'the S3 server the S3 blob store is tested against',
    go: true,
    prepare: async (progress, note) => {
      const script = path.join(SCRIPTS, 'build-versitygw.mjs');
      const missing = JSON.parse(await runScript(script, ['--missing'], process.env)) as string[];
      if (missing.length > 0) {
        note(`versitygw cannot be built here (no Go): the S3 blob store tests ${withoutIt('run on s3rver')}`);
        return;
      }
      await runScript(script, [], goEnvironment(process.env), progress);
    },
  },
  helm: {
    name: 'Helm',
    usedBy: "the chart's test (deploy/helm), which lints and renders it",
    go: true,
    prepare: async (progress, note) => {
      const script = path.join(SCRIPTS, 'build-helm.mjs');
      const missing = JSON.parse(await runScript(script, ['--missing'], process.env)) as string[];
      if (missing.length > 0) {
        note(`Helm cannot be built here (no Go): the chart's test ${withoutIt('skips')}`);
        return;
      }
      await runScript(script, [], goEnvironment(process.env), progress);
    },
  },
  'kubernetes-validate': {
    name: 'kubernetes-validate',
    usedBy:
      "the chart's test, which validates what Helm renders against the Kubernetes schemas; PyPI, in a venv",
    go: false,
    prepare: async (progress, note) => {
      const script = path.join(SCRIPTS, 'install-kubernetes-validate.mjs');
      const missing = JSON.parse(await runScript(script, ['--missing'], process.env)) as string[];
      if (missing.length > 0) {
        note(
          `kubernetes-validate cannot be installed here (no ${missing.join(', ')}): the chart's test ${withoutIt('skips')}`,
        );
        return;
      }
      await runScript(script, [], process.env, progress);
    },
  },
  'a2a-python-sdk': {
    name: "the Python A2A SDK (PyPI's a2a-sdk)",
    usedBy: 'the A2A tests, which drive the gateway with a Python caller; PyPI, in a venv',
    go: false,
    prepare: async (progress, note) => {
      const script = path.join(SCRIPTS, 'install-a2a-python-sdk.mjs');
      const missing = JSON.parse(await runScript(script, ['--missing'], process.env)) as string[];
      if (missing.length > 0) {
        note(
          `the Python A2A SDK cannot be installed here (no ${missing.join(', ')}): its A2A test ${withoutIt('skips')}`,
        );
        return;
      }
      await runScript(script, [], process.env, progress);
    },
  },
  'time-skipping-server': {
    name: "Temporal's time-skipping test server",
    usedBy: 'the workflow timeout tests; Java, from Maven Central',
    go: false,
    prepare: async (progress, note) => {
      const missing = timeSkippingMissing();
      if (missing.length > 0) {
        note(`${whatIsMissing(missing)}: the time-skipping tests ${withoutIt('skip')}`);
        return;
      }
      await runScript(path.join(SCRIPTS, 'fetch-test-server.mjs'), [], process.env, progress);
    },
  },
};

/**
 * Makes `which` ready: the Go builds one at a time, the Maven fetch and the pip installs beside them. Says what it
 * builds, why that takes a while, and how long each took; says nothing when all are found.
 */
export async function prepareTestServers(
  which: readonly TestServer[],
  log: (line: string) => void,
  preparations: Readonly<Record<TestServer, Preparation>> = PREPARATIONS,
): Promise<PreparedTestServers> {
  const prepared: PreparedTestServers = {};
  const say = (line: string) => log(`[test servers] ${line}`);
  let announced = false;
  const announce = () => {
    if (announced) return;
    announced = true;
    say(
      'Building what the tests run before any test starts, once per machine into .tools/: Go programs ' +
        'from the Go module proxy (many minutes each without a warm Go cache), a Java server from Maven Central ' +
        'and Python packages from PyPI.',
    );
  };
  const run = async (name: TestServer) => {
    const { name: what, usedBy, prepare } = preparations[name];
    const started = Date.now();
    let working = false;
    await prepare(
      (line) => {
        announce();
        if (!working) say(`${what} (${usedBy}):`);
        working = true;
        say(`  ${line}`);
      },
      say,
      prepared,
    );
    if (working) say(`  ${what} ready after ${Math.round((Date.now() - started) / 1000)} s`);
  };
  const goBuilds = which.filter((name) => preparations[name].go);
  const others = which.filter((name) => !preparations[name].go);
  // Settled, not raced: a failed build must not leave another still running after the setup ends.
  const results = await Promise.allSettled([
    goBuilds.reduce((previous, name) => previous.then(() => run(name)), Promise.resolve()),
    ...others.map(run),
  ]);
  const failed = results.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  return prepared;
}

/**
 * Runs a script of scripts/ with this Node, its stderr lines to `progress`; resolves with its
 * stdout, rejects with the end of its stderr.
 */
function runScript(
  script: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  progress: (line: string) => void = () => undefined,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    const stderr: string[] = [];
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    createInterface({ input: child.stderr }).on('line', (line) => {
      stderr.push(line);
      progress(line);
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(stdout)
        : reject(
            new Error(`${path.basename(script)} failed (exit ${code}):\n${stderr.slice(-20).join('\n')}`),
          ),
    );
  });
}
