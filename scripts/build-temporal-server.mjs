#!/usr/bin/env node
// Builds Temporal's server and its SQL schema tool from the Go module proxy (`go install`) into
// .tools/temporal-server/<version>/, with the module's PostgreSQL schema beside them, and prints
// that directory. Run by `durable-agent cluster start` when the directory is missing; safe to run
// by hand or by several processes at once. Needs `go` only to build: once built, nothing else.
import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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
  { pkg: `${MODULE}/cmd/server`, installedAs: 'server', file: SERVER_BINARY },
  { pkg: `${MODULE}/cmd/tools/sql`, installedAs: 'sql', file: SQL_TOOL },
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
  return built || onPath('go') ? [] : ['go'];
}

/** The built directory, building it first when it is not there yet. */
export async function buildTemporalServer({ log = (line) => console.error(line) } = {}) {
  if (isBuilt()) return TEMPORAL_SERVER_DIR;
  if (missingCommands({ built: false }).length > 0) {
    throw new Error(
      `building Temporal server ${TEMPORAL_SERVER_VERSION} needs Go (1.24 or later) on PATH, which is missing; ` +
        'install it from https://go.dev/dl/ or your distribution (Debian: apt-get install golang-go)',
    );
  }
  log(
    `Building Temporal server ${TEMPORAL_SERVER_VERSION} (go install ${MODULE}/cmd/server and cmd/tools/sql) ` +
      `into ${TEMPORAL_SERVER_DIR}; this happens once and takes a few minutes.`,
  );
  const parent = path.dirname(TEMPORAL_SERVER_DIR);
  await mkdir(parent, { recursive: true });
  // Built in a scratch directory and renamed whole: a concurrent or interrupted build never leaves
  // half a server, and the first of two concurrent builds to finish wins.
  const scratch = await mkdtemp(path.join(parent, `.build-${TEMPORAL_SERVER_VERSION}-`));
  try {
    for (const { pkg, installedAs, file } of PROGRAMS) {
      // Both programs are called after their folder; each gets a GOBIN of its own.
      const gobin = path.join(scratch, `gobin-${installedAs}`);
      await run('go', ['install', `${pkg}@v${TEMPORAL_SERVER_VERSION}`], { GOBIN: gobin });
      await rename(path.join(gobin, installedAs), path.join(scratch, file));
      await rm(gobin, { recursive: true, force: true });
    }
    await copySchema(path.join(scratch, POSTGRES_SCHEMA));
    await chmod(scratch, 0o755);
    await rename(scratch, TEMPORAL_SERVER_DIR).catch((error) => {
      // Another process got there first; its build is as good as ours.
      if (!isBuilt()) throw error;
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return TEMPORAL_SERVER_DIR;
}

/** The module's PostgreSQL schema (in the module cache once `go install` has run), made writable. */
async function copySchema(target) {
  const { stdout } = await run('go', ['mod', 'download', '-json', `${MODULE}@v${TEMPORAL_SERVER_VERSION}`]);
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

function isExecutable(file) {
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

function run(command, args, extraEnv = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
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
        : reject(new Error(`${command} ${args.join(' ')} failed (exit ${code}):\n${stderr}`)),
    );
  });
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
