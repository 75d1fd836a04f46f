import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { PACKAGE_ROOT } from '../../platform/paths';
import { goEnvironment } from '../temporal-cli';

/** Builds the server when it is not built yet, and says where it is. */
export const BUILD_SCRIPT = path.join(PACKAGE_ROOT, 'scripts', 'build-temporal-server.mjs');

/** The programs and schema of one Temporal server version, as BUILD_SCRIPT lays them out. */
export interface TemporalServerBuild {
  version: string;
  server: string;
  sqlTool: string;
  /** Holds `temporal/versioned` and `visibility/versioned`, for `temporal-sql-tool update-schema`. */
  postgresSchema: string;
}

/** Runs BUILD_SCRIPT (a few minutes the first time, then at once); its progress goes to `log`. */
export async function findOrBuildTemporalServer(
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
): Promise<TemporalServerBuild> {
  const dir = await new Promise<string>((resolve, reject) => {
    // `go install` is given only what it needs of this process's environment (no model key).
    const child = spawn(process.execPath, [BUILD_SCRIPT], {
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
        : reject(
            new Error(`${BUILD_SCRIPT} could not build the Temporal server (exit ${code}; why is above)`),
          ),
    );
  });
  return {
    version: path.basename(dir),
    server: path.join(dir, 'temporal-server'),
    sqlTool: path.join(dir, 'temporal-sql-tool'),
    postgresSchema: path.join(dir, 'schema', 'postgresql', 'v12'),
  };
}
