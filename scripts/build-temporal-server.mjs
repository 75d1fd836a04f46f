#!/usr/bin/env node
// Builds Temporal's server and its SQL schema tool from the Go module proxy (`go install`) into
// .tools/temporal-server/<version>/, with the module's PostgreSQL schema beside them, and prints
// that directory. Run by `durable-agent cluster start` when the directory is missing; safe to run
// by hand or by several processes at once. Needs `go` only to build: once built, nothing else.
import { existsSync } from 'node:fs';
import { chmod, cp, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { goBuild, isExecutable, missingForBuild, runGo } from './go-build.mjs';

export const TEMPORAL_SERVER_VERSION = '1.32.1';
const MODULE = 'go.temporal.io/server';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const TEMPORAL_SERVER_DIR = path.join(root, '.tools', 'temporal-server', TEMPORAL_SERVER_VERSION);
/** What the built directory holds, relative to it. */
export const SERVER_BINARY = 'temporal-server';
export const SQL_TOOL = 'temporal-sql-tool';
/** The schema `temporal-sql-tool update-schema -d` applies, one `versioned` folder per database. */
export const POSTGRES_SCHEMA = path.join('schema', 'postgresql', 'v12');

/** Which `go install` package becomes which file of the built directory. */
const PROGRAMS = [
  {
    pkg: `${MODULE}/cmd/server`,
    version: `v${TEMPORAL_SERVER_VERSION}`,
    installedAs: 'server',
    file: SERVER_BINARY,
  },
  {
    pkg: `${MODULE}/cmd/tools/sql`,
    version: `v${TEMPORAL_SERVER_VERSION}`,
    installedAs: 'sql',
    file: SQL_TOOL,
  },
];

/** Whether both programs and the schema are in place (the directory is only ever created whole). */
export function isBuilt() {
  return (
    PROGRAMS.every(({ file }) => isExecutable(path.join(TEMPORAL_SERVER_DIR, file))) &&
    existsSync(path.join(TEMPORAL_SERVER_DIR, POSTGRES_SCHEMA, 'visibility', 'versioned'))
  );
}

/** The commands a build would need and PATH lacks: none once built. */
export function missingCommands({ built = isBuilt() } = {}) {
  return missingForBuild(built);
}

/** The built directory, building it first when it is not there yet. */
export function buildTemporalServer({ log = (line) => console.error(line) } = {}) {
  return goBuild({
    what: `Temporal server ${TEMPORAL_SERVER_VERSION}`,
    target: TEMPORAL_SERVER_DIR,
    programs: PROGRAMS,
    isBuilt,
    finish: (scratch) => copySchema(path.join(scratch, POSTGRES_SCHEMA)),
    log,
  });
}

/** The module's PostgreSQL schema (in the module cache once `go install` has run), made writable. */
async function copySchema(target) {
  const { stdout } = await runGo(['mod', 'download', '-json', `${MODULE}@v${TEMPORAL_SERVER_VERSION}`]);
  const moduleDir = JSON.parse(stdout).Dir;
  if (typeof moduleDir !== 'string') throw new Error(`go mod download did not say where ${MODULE} is`);
  const source = path.join(moduleDir, POSTGRES_SCHEMA);
  await stat(source);
  await cp(source, target, { recursive: true });
  // The module cache is read-only; a copy that stayed so could not be deleted with .tools/.
  await makeWritable(target);
}

async function makeWritable(directory) {
  await chmod(directory, 0o755);
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    const entryPath = path.join(directory, entry.name);
    if (entry.isDirectory()) await makeWritable(entryPath);
    else await chmod(entryPath, 0o644);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    // `--missing`: only say (as JSON) which commands a build would lack, building nothing.
    console.log(
      process.argv[2] === '--missing' ? JSON.stringify(missingCommands()) : await buildTemporalServer(),
    );
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
