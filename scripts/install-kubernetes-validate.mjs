#!/usr/bin/env node
// Installs PyPI's kubernetes-validate, which carries the Kubernetes API's JSON schemas for every
// release, into a virtual environment of its own in .tools/kubernetes-validate/<version>/, and
// prints the path of its Python: the chart's test (test/unit/helm-chart.test.ts) validates what
// `helm template` renders with it, offline. The tests' global setup (test/support/test-servers.ts)
// runs it before any test starts. Needs python3 with its venv module (Debian: apt-get install
// python3-venv). `--missing` prints (as JSON) what an install would lack, installing nothing;
// `--find` prints the Python's path when it is installed, and nothing when it is not.
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { chmod, mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const KUBERNETES_VALIDATE_VERSION = '1.37.0';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const target = path.join(root, '.tools', 'kubernetes-validate', KUBERNETES_VALIDATE_VERSION);
/** Runs the validator as `<python> -m kubernetes_validate`, wherever the environment was renamed to. */
export const KUBERNETES_VALIDATE_PYTHON = path.join(target, 'bin', 'python');
/** pip's whole install (about 150 MB, mostly schemas) is given this long before it is stopped. */
const INSTALL_TIMEOUT_MS = 15 * 60_000;

export function isInstalled() {
  try {
    accessSync(KUBERNETES_VALIDATE_PYTHON, constants.X_OK);
    return (
      spawnSync(KUBERNETES_VALIDATE_PYTHON, ['-m', 'kubernetes_validate', '--version'], {
        timeout: 30_000,
      }).status === 0
    );
  } catch {
    return false;
  }
}

/** What an install lacks: `python3` with its venv module; nothing once installed. */
export function missingForInstall(installed = isInstalled()) {
  if (installed) return [];
  const venv = spawnSync('python3', ['-c', 'import venv, ensurepip'], { timeout: 30_000 });
  return venv.status === 0 ? [] : ['python3 with venv (Debian: apt-get install python3-venv)'];
}

/** The Python's path, installing first when it is not there yet. */
export async function installKubernetesValidate({ log = (line) => console.error(line) } = {}) {
  if (isInstalled()) return KUBERNETES_VALIDATE_PYTHON;
  const missing = missingForInstall(false);
  if (missing.length > 0) throw new Error(`installing kubernetes-validate needs ${missing.join(', ')}`);
  log(
    `Installing kubernetes-validate ${KUBERNETES_VALIDATE_VERSION} from PyPI into ${target} (a virtual environment; once, a minute or two).`,
  );
  const parent = path.dirname(target);
  await mkdir(parent, { recursive: true });
  // Installed in a scratch directory and renamed whole: a concurrent or interrupted install never
  // leaves half an environment, and the first of two concurrent installs to finish wins.
  const scratch = await mkdtemp(path.join(parent, `.install-${KUBERNETES_VALIDATE_VERSION}-`));
  try {
    await run('python3', ['-m', 'venv', scratch]);
    await run(path.join(scratch, 'bin', 'python'), [
      '-m',
      'pip',
      'install',
      '--quiet',
      '--disable-pip-version-check',
      '--no-input',
      '--timeout',
      '60',
      `kubernetes-validate==${KUBERNETES_VALIDATE_VERSION}`,
    ]);
    await chmod(scratch, 0o755);
    await rename(scratch, target).catch((error) => {
      if (!isInstalled()) throw error;
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  if (!isInstalled()) throw new Error(`kubernetes-validate does not run from ${target} after its install`);
  return KUBERNETES_VALIDATE_PYTHON;
}

function run(command, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: INSTALL_TIMEOUT_MS });
    let output = '';
    const keep = (chunk) => {
      output = (output + chunk.toString()).slice(-6_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', reject);
    child.on('close', (code, signal) =>
      code === 0
        ? resolve()
        : reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit ${code}`}):\n${output}`)),
    );
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const mode = process.argv[2];
    if (mode === '--missing') console.log(JSON.stringify(missingForInstall()));
    else if (mode === '--find') console.log(isInstalled() ? KUBERNETES_VALIDATE_PYTHON : '');
    else console.log(await installKubernetesValidate());
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
