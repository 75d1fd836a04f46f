import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { type ScriptedModelServer, startScriptedModelServer } from '../support/scripted-model-server';

/**
 * The package as a user gets it: `npm pack` of the built project holds only what runs, installs
 * into a fresh ES module project, typechecks there under the module resolutions users choose, and
 * runs a worker with a tool of the user's own and a client that asks it a question.
 */
const PROJECT_ROOT = path.resolve(__dirname, '..', '..');
const FIXTURE_DIR = path.join(__dirname, 'fixture');
const TSC = path.join(PROJECT_ROOT, 'node_modules', '.bin', 'tsc');
const WORKFLOW_BUNDLE = 'dist/workflow-bundle.js';
const MAX_UNPACKED_BYTES_WITHOUT_BUNDLE = 3_000_000;
/** Installing resolves every dependency of the package: minutes on a cold cache. */
const INSTALL_TIMEOUT_MS = 8 * 60_000;
const STEP_TIMEOUT_MS = 2 * 60_000;

const run = promisify(execFile);

interface PackedFile {
  path: string;
  size: number;
}
interface PackResult {
  filename: string;
  entryCount: number;
  size: number;
  unpackedSize: number;
  files: PackedFile[];
}

let scratch: string;
let packed: PackResult;
let project: string;
let model: ScriptedModelServer | undefined;
let worker: ChildProcess | undefined;

beforeAll(
  async () => {
    scratch = await mkdtemp(path.join(os.tmpdir(), 'durable-agent-package-'));
    // Scripts are skipped: `prepare` would build again, and the suite runs after `npm run build`.
    const { stdout } = await run(
      'npm',
      ['pack', '--ignore-scripts', '--json', '--pack-destination', scratch],
      {
        cwd: PROJECT_ROOT,
        env: npmEnvironment(),
        timeout: STEP_TIMEOUT_MS,
        maxBuffer: 64 * 1024 * 1024,
      },
    );
    [packed] = JSON.parse(stdout) as [PackResult];
    project = await createUserProject(path.join(scratch, packed.filename));
  },
  INSTALL_TIMEOUT_MS + 2 * STEP_TIMEOUT_MS,
);

afterAll(async () => {
  if (worker) await stopProcess(worker);
  await model?.close();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

test('the tarball holds the built package and the files its commands run, without tests, benches or sources', () => {
  const paths = packed.files.map((file) => file.path);
  expect(paths).toEqual(
    expect.arrayContaining([
      'package.json',
      'README.md',
      'LICENSE',
      WORKFLOW_BUNDLE,
      'dist/client/index.js',
      'dist/client/index.d.ts',
      'dist/worker/index.js',
      'dist/worker/index.d.ts',
      'dist/workflows/public-api.js',
      'dist/workflows/public-api.d.ts',
      'dist/cli/cli.js',
      'dist/console/assets/console.js',
      'dist/console/assets/console.css',
      'scripts/build-temporal-server.mjs',
      'scripts/go-build.mjs',
      'deploy/temporal/setup-schema.sh',
    ]),
  );
  expect(paths.filter((file) => /^(test|bench|chaos|src)\//.test(file))).toEqual([]);
  expect(paths.filter((file) => file.endsWith('.map'))).toEqual([]);
  const bundleSize = packed.files.find((file) => file.path === WORKFLOW_BUNDLE)!.size;
  expect(packed.unpackedSize - bundleSize).toBeLessThan(MAX_UNPACKED_BYTES_WITHOUT_BUNDLE);
});

test.each([
  { moduleResolution: 'node16', module: 'node16' },
  { moduleResolution: 'bundler', module: 'preserve' },
  { moduleResolution: 'node10', module: 'commonjs' },
])(
  "a user's TypeScript typechecks against every entry point under moduleResolution $moduleResolution",
  async ({ moduleResolution, module }) => {
    const { stdout } = await run(
      TSC,
      [
        '--noEmit',
        '--strict',
        '--skipLibCheck',
        ...['--target', 'es2022', '--module', module, '--moduleResolution', moduleResolution],
        // Node's types, which a user's project has of its own, are borrowed from this project.
        ...['--typeRoots', path.join(PROJECT_ROOT, 'node_modules', '@types'), '--types', 'node'],
        'consumer.ts',
      ],
      { cwd: project, timeout: STEP_TIMEOUT_MS },
    ).catch((error: { stdout?: string }) => ({ stdout: error.stdout || String(error) }));
    // tsc reports type errors on stdout.
    expect(stdout).toBe('');
  },
  STEP_TIMEOUT_MS,
);

test(
  "a user's worker runs a tool of its own and a user's client gets the answer",
  async () => {
    model = await startScriptedModelServer([
      { toolCalls: [{ id: 'call_weather', name: 'weather', arguments: { city: 'Lisbon' } }] },
      { text: 'Sunny in Lisbon.' },
    ]);
    const workspace = path.join(scratch, 'workspace');
    await mkdir(workspace);
    const env = {
      ...npmEnvironment(),
      TEMPORAL_ADDRESS: process.env.TEST_TEMPORAL_ADDRESS!,
      OPENAI_BASE_URL: model.baseUrl,
      TASK_QUEUE: `package-${randomUUID()}`,
      WORKSPACE: workspace,
    };
    worker = spawn(process.execPath, ['worker.mjs'], {
      cwd: project,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    await untilReady(worker);

    const { stdout } = await run(process.execPath, ['client.mjs'], {
      cwd: project,
      env,
      timeout: STEP_TIMEOUT_MS,
    });

    expect(JSON.parse(stdout.trim().split('\n').pop()!)).toEqual({ answer: 'Sunny in Lisbon.' });
    const toolResults = model.script.requests[1]!.messages.filter((message) => message.role === 'tool');
    expect(toolResults).toEqual([expect.objectContaining({ tool_call_id: 'call_weather' })]);
    expect(toolResults[0]!.content).toContain('sunny in Lisbon');
    await stopProcess(worker);
  },
  2 * STEP_TIMEOUT_MS,
);

/**
 * A fresh ES module project with the tarball installed, and the fixture's worker, client and
 * TypeScript in it. Besides the package it depends on what a user's worker imports itself (zod,
 * Temporal's client and worker), at the versions the package uses.
 */
async function createUserProject(tarball: string): Promise<string> {
  const directory = path.join(scratch, 'user-project');
  await mkdir(directory);
  const ours = JSON.parse(await readFile(path.join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const own = ['zod', '@temporalio/client', '@temporalio/worker'];
  await writeFile(
    path.join(directory, 'package.json'),
    JSON.stringify({
      name: 'durable-agent-user',
      private: true,
      type: 'module',
      dependencies: Object.fromEntries(own.map((name) => [name, ours.dependencies[name]])),
    }),
  );
  for (const file of await readdir(FIXTURE_DIR)) {
    await copyFile(path.join(FIXTURE_DIR, file), path.join(directory, file));
  }
  await run('npm', ['install', tarball, '--no-audit', '--no-fund', '--prefer-offline'], {
    cwd: directory,
    env: npmEnvironment(),
    timeout: INSTALL_TIMEOUT_MS,
    maxBuffer: 64 * 1024 * 1024,
  });
  return directory;
}

/**
 * This environment without what `npm test` tells its scripts about this project: an npm started
 * with `npm_config_local_prefix` would install into this project instead of the user's.
 */
function npmEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([name]) => !/^(npm_config_local_prefix|npm_package_|npm_lifecycle_|INIT_CWD$)/i.test(name),
    ),
  );
}

/** Resolves once the fixture's worker.mjs says `ready`; rejects when it exits first or takes too long. */
function untilReady(child: ChildProcess): Promise<void> {
  let stdout = '';
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`the worker did not start in ${STEP_TIMEOUT_MS} ms:\n${stderr}`));
    }, STEP_TIMEOUT_MS);
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      if (stdout.includes('ready\n')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the worker exited (${code}) before it was ready:\n${stderr}`));
    });
  });
}

/** Asks a process to stop (SIGTERM), and kills it when it has not within a while; waits until it is gone. */
async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}
