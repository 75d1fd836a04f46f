import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { PACKAGE_ROOT } from '../../platform/paths';
import { goEnvironment } from '../temporal-cli';

/** Builds the server when it is not built yet, and says where it is. */
export const BUILD_SCRIPT = path.join(PACKAGE_ROOT, 'scripts', 'build-temporal-server.mjs');
/** Builds Temporal's Web UI server when it is not built yet, and says where it is. */
export const UI_BUILD_SCRIPT = path.join(PACKAGE_ROOT, 'scripts', 'build-temporal-ui-server.mjs');

/** The programs and schema of one Temporal server version, as BUILD_SCRIPT lays them out. */
export interface TemporalServerBuild {
  version: string;
  server: string;
  sqlTool: string;
  /** Holds `temporal/versioned` and `visibility/versioned`, for `temporal-sql-tool update-schema`. */
  postgresSchema: string;
}

/** Temporal's Web UI server of one version, as UI_BUILD_SCRIPT lays it out. */
export interface TemporalUiServerBuild {
  version: string;
  uiServer: string;
}

/** Runs BUILD_SCRIPT (a few minutes the first time, then at once); its progress goes to `log`. */
export async function findOrBuildTemporalServer(
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
): Promise<TemporalServerBuild> {
  const dir = await runBuildScript(BUILD_SCRIPT, 'the Temporal server', env, log);
  return {
    version: path.basename(dir),
    server: path.join(dir, 'temporal-server'),
    sqlTool: path.join(dir, 'temporal-sql-tool'),
    postgresSchema: path.join(dir, 'schema', 'postgresql', 'v12'),
  };
}

/** Runs UI_BUILD_SCRIPT (a few minutes the first time, then at once); its progress goes to `log`. */
export async function findOrBuildTemporalUiServer(
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
): Promise<TemporalUiServerBuild> {
  const dir = await runBuildScript(UI_BUILD_SCRIPT, "Temporal's Web UI server", env, log);
  return { version: path.basename(dir), uiServer: path.join(dir, 'ui-server') };
}

/** Runs a build script, which prints the built directory; resolves with that directory. */
function runBuildScript(
  script: string,
  what: string,
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    // `go install` is given only what it needs of this process's environment (no model key).
    const child = spawn(process.execPath, [script], {
      env: goEnvironment(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    createInterface({ input: child.stderr }).on('line', log);
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(stdout.trim())
        : reject(new Error(`${script} could not build ${what} (exit ${code}; why is above)`)),
    );
  });
}
