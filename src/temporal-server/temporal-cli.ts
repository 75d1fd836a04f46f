import { spawn } from 'node:child_process';
import { access, constants, mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { childEnvironment } from '../tools/exec/child-environment';

/** The newest CLI `go install` accepts: later releases carry a `replace` directive it refuses. */
export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';

export interface CliLookup {
  env: NodeJS.ProcessEnv;
  toolsDir: string;
  log: (line: string) => void;
}

/**
 * Finds a Temporal CLI: TEMPORAL_CLI_PATH, `temporal` on PATH, one built earlier into the tools
 * directory, else builds one there with `go install`. Returns undefined when there is no way to get
 * one here, so the caller can let @temporalio/testing download it instead.
 */
export async function findOrBuildTemporalCli({ env, toolsDir, log }: CliLookup): Promise<string | undefined> {
  if (env.TEMPORAL_CLI_PATH) {
    if (!(await isExecutable(env.TEMPORAL_CLI_PATH)))
      throw new Error(`TEMPORAL_CLI_PATH is not an executable: ${env.TEMPORAL_CLI_PATH}`);
    return env.TEMPORAL_CLI_PATH;
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, 'temporal');
    if (await isExecutable(candidate)) return candidate;
  }
  const built = path.join(toolsDir, 'bin', 'temporal');
  if (await isExecutable(built)) return built;
  if (!(await commandExists('go', env))) return undefined;

  log(
    `Building the Temporal CLI (go install ${TEMPORAL_CLI_MODULE}) into ${toolsDir}; once, minutes (many more without a warm Go cache).`,
  );
  await mkdir(path.join(toolsDir, 'bin'), { recursive: true });
  // Build into a scratch directory and rename, so a concurrent or interrupted build never leaves half a binary.
  const scratch = await mkdtemp(path.join(toolsDir, 'build-'));
  try {
    await run('go', ['install', TEMPORAL_CLI_MODULE], {
      ...goEnvironment(env),
      GOBIN: scratch,
      GOFLAGS: `${env.GOFLAGS ?? ''} -buildvcs=false`.trim(),
    });
    await rename(path.join(scratch, 'temporal'), built);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return built;
}

async function isExecutable(file: string): Promise<boolean> {
  return access(file, constants.X_OK).then(
    () => true,
    () => false,
  );
}

async function commandExists(command: string, env: NodeJS.ProcessEnv): Promise<boolean> {
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    if (await isExecutable(path.join(dir, command))) return true;
  }
  return false;
}

/**
 * What `go install` needs of this process's environment and nothing else (no model key, no blob
 * store credentials): a shell's basics, Go's own settings, and the proxy and certificate variables
 * that reach the module proxy.
 */
export function goEnvironment(env: NodeJS.ProcessEnv): Record<string, string> {
  const needed = Object.keys(env).filter(
    (name) =>
      /^(GO|CGO_)/.test(name) ||
      /^(HTTPS?_PROXY|NO_PROXY|ALL_PROXY)$/i.test(name) ||
      /^SSL_CERT_(FILE|DIR)$/.test(name) ||
      /^(CC|CXX|XDG_CACHE_HOME|XDG_CONFIG_HOME)$/.test(name),
  );
  return childEnvironment(env, needed);
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4_000);
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`${command} ${args.join(' ')} failed (exit ${code}):\n${stderr}`)),
    );
  });
}
