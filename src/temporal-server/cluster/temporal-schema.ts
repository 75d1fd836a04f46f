import { spawn } from 'node:child_process';
import path from 'node:path';
import { childEnvironment } from '../../tools/exec/child-environment';
import { SCHEMA_SCRIPT, databaseEnvironment } from './cluster-config';
import type { TemporalServerBuild } from './temporal-server-build';

/**
 * Brings both databases to the schema of `build`'s server version with the script docker-compose.yml
 * runs too: each database created if missing, `setup-schema -v 0.0` (the version table; it leaves a
 * newer schema alone), then `update-schema` with the versioned folder (only the steps above the
 * current version). Safe to run again.
 */
export function updateTemporalSchema(
  build: TemporalServerBuild,
  postgresPort: number,
  password: string,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', [SCHEMA_SCRIPT], {
      env: {
        ...childEnvironment(process.env),
        ...databaseEnvironment(postgresPort, password),
        SCHEMA_DIR: path.dirname(path.dirname(build.postgresSchema)),
        SQL_TOOL: build.sqlTool,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${SCHEMA_SCRIPT} failed (exit ${code}):\n${output}`)),
    );
  });
}
