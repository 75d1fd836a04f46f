// Builds Go programs from the Go module proxy (`go install`) into a directory of .tools/ of their
// own, built in a scratch directory and renamed whole: a concurrent or interrupted build never
// leaves half of it, and the first of two concurrent builds to finish wins.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { chmod, mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import path from 'node:path';

/**
 * `target`, built unless `isBuilt()`: `prepare(scratch)` first, then each of `programs` ({ pkg,
 * version, installedAs, file, moduleDir, env }: go install's package and version, the name it
 * installs as, the file it becomes; with `moduleDir(scratch)`, installed without a version inside
 * that module, which says the versions, with `env` on top), then `finish(scratch)` for anything
 * else the directory holds. `what` names it in messages.
 */
export async function goBuild({
  what,
  target,
  programs,
  isBuilt,
  prepare = async () => {},
  finish = async () => {},
  log,
}) {
  if (isBuilt()) return target;
  if (!onPath('go')) {
    throw new Error(
      `building ${what} needs Go (1.24 or later) on PATH, which is missing; ` +
        'install it from https://go.dev/dl/ or your distribution (Debian: apt-get install golang-go)',
    );
  }
  log(
    `Building ${what} (go install ${programs.map(({ pkg }) => pkg).join(', ')}) into ${target}; once, minutes (many more without a warm Go cache).`,
  );
  const parent = path.dirname(target);
  await mkdir(parent, { recursive: true });
  const scratch = await mkdtemp(path.join(parent, `.build-${path.basename(target)}-`));
  try {
    await prepare(scratch);
    for (const { pkg, version, installedAs, file, moduleDir, env = {} } of programs) {
      // Programs are called after their folder, which may be the same: each gets a GOBIN of its own.
      const gobin = path.join(scratch, `gobin-${file}`);
      if (moduleDir) {
        await runGo(['install', pkg], { ...env, GOBIN: gobin }, { cwd: moduleDir(scratch) });
      } else {
        await runGo(['install', `${pkg}@${version}`], { ...env, GOBIN: gobin });
      }
      await rename(path.join(gobin, installedAs), path.join(scratch, file));
      await rm(gobin, { recursive: true, force: true });
    }
    await finish(scratch);
    await chmod(scratch, 0o755);
    await rename(scratch, target).catch((error) => {
      // Another process got there first; its build is as good as ours.
      if (!isBuilt()) throw error;
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return target;
}

/** The commands a build would need and PATH lacks: none once built. */
export function missingForBuild(built) {
  return built || onPath('go') ? [] : ['go'];
}

export function isExecutable(file) {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(command) {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter(Boolean)
    .some((dir) => isExecutable(path.join(dir, command)));
}

/** Runs `go` with `args` (in `cwd` when given); resolves with its stdout, rejects with the end of its stderr. */
export function runGo(args, extraEnv = {}, { cwd } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn('go', args, {
      cwd,
      env: { ...process.env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk) => {
      stderr = (stderr + chunk.toString()).slice(-6_000);
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve({ stdout })
        : reject(new Error(`go ${args.join(' ')} failed (exit ${code}):\n${stderr}`)),
    );
  });
}
