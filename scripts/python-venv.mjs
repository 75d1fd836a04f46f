// A PyPI package the tests run, installed into a Python virtual environment of its own under
// .tools/<name>/<version>/, once per machine. Used by the install-*.mjs scripts beside it, which
// the tests' global setup (test/support/test-servers.ts) runs before any test starts. Needs python3
// with its venv module (Debian: apt-get install python3-venv).
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { chmod, mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** pip's whole install is given this long before it is stopped. */
const INSTALL_TIMEOUT_MS = 15 * 60_000;

/**
 * One package's environment: `name` and `version` say where it lives, `requirement` what pip
 * installs, `probe` the arguments to its Python that exit 0 once it works, `takes` how long an
 * install takes, for the console.
 */
export function pythonVenv({ name, version, requirement, probe, takes }) {
  const target = path.join(root, '.tools', name, version);
  const python = path.join(target, 'bin', 'python');

  function isInstalled() {
    try {
      accessSync(python, constants.X_OK);
      return spawnSync(python, probe, { timeout: 30_000 }).status === 0;
    } catch {
      return false;
    }
  }

  /** What an install lacks: `python3` with its venv module; nothing once installed. */
  function missingForInstall(installed = isInstalled()) {
    if (installed) return [];
    const venv = spawnSync('python3', ['-c', 'import venv, ensurepip'], { timeout: 30_000 });
    return venv.status === 0 ? [] : ['python3 with venv (Debian: apt-get install python3-venv)'];
  }

  /** The Python's path, installing first when it is not there yet. */
  async function install({ log = (line) => console.error(line) } = {}) {
    if (isInstalled()) return python;
    const missing = missingForInstall(false);
    if (missing.length > 0) throw new Error(`installing ${name} needs ${missing.join(', ')}`);
    log(`Installing ${requirement} from PyPI into ${target} (a virtual environment; once, ${takes}).`);
    const parent = path.dirname(target);
    await mkdir(parent, { recursive: true });
    // Installed in a scratch directory and renamed whole: a concurrent or interrupted install never
    // leaves half an environment, and the first of two concurrent installs to finish wins.
    const scratch = await mkdtemp(path.join(parent, `.install-${version}-`));
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
        requirement,
      ]);
      await chmod(scratch, 0o755);
      await rename(scratch, target).catch((error) => {
        if (!isInstalled()) throw error;
      });
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
    if (!isInstalled()) throw new Error(`${name} does not run from ${target} after its install`);
    return python;
  }

  /** The script's command line: `--missing` prints what an install lacks, `--find` the Python or nothing. */
  async function main(argv = process.argv) {
    try {
      const mode = argv[2];
      if (mode === '--missing') console.log(JSON.stringify(missingForInstall()));
      else if (mode === '--find') console.log(isInstalled() ? python : '');
      else console.log(await install());
    } catch (error) {
      console.error(error instanceof Error ? error.message : error);
      process.exit(1);
    }
  }

  return { target, python, isInstalled, missingForInstall, install, main };
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

/** Whether `import.meta.url` is the script node was asked to run. */
export function isMain(url) {
  return Boolean(process.argv[1]) && path.resolve(process.argv[1]) === fileURLToPath(url);
}
