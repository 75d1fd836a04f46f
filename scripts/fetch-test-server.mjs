#!/usr/bin/env node
// Fetches Temporal's Java time-skipping test server from Maven Central (with its dependencies) into
// .tools/temporal-test-server/<version>/ and prints the path of the executable the SDK starts.
// Run by the tests' global setup (test/support/test-servers.ts) before any test starts; safe to run
// by hand or by several processes at once. Needs `java` (17+) to run the server and `mvn` to fetch
// it: @temporalio/testing would download a native build instead, which only works with the internet
// at large.
import { spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { chmod, mkdir, mkdtemp, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The newest release `mvn` resolved with all its dependencies (sdk-java 1.38.0). */
export const TEST_SERVER_VERSION = '1.38.0';
const DEPENDENCY_PLUGIN = 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const TEST_SERVER_DIR = path.join(root, '.tools', 'temporal-test-server', TEST_SERVER_VERSION);
/** What @temporalio/testing runs as `<executable> <port> [extraArgs]`. */
export const TEST_SERVER_EXECUTABLE = path.join(TEST_SERVER_DIR, 'temporal-test-server');

// The SDK gives the server 5 s to answer, so the JVM is tuned to start fast (a small heap, no C2
// compiler) rather than to run fast. Its output goes to a log beside it: a failed start says where.
const WRAPPER = `#!/bin/sh
# Temporal's time-skipping test server ${TEST_SERVER_VERSION}, written by scripts/fetch-test-server.mjs.
dir=$(dirname "$0")
exec java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xms64m -Xmx512m \\
  -cp "$dir/lib/*" io.temporal.testserver.TestServer "$@" >>"$dir/server.log" 2>&1
`;

const POM = `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>durable-agent</groupId>
  <artifactId>fetch-test-server</artifactId>
  <version>0</version>
  <dependencies>
    <dependency>
      <groupId>io.temporal</groupId>
      <artifactId>temporal-test-server</artifactId>
      <version>${TEST_SERVER_VERSION}</version>
    </dependency>
    <!-- The SLF4J binding the server leaves to its user: without one it warns on every start. -->
    <dependency>
      <groupId>org.slf4j</groupId>
      <artifactId>slf4j-nop</artifactId>
      <version>1.7.36</version>
    </dependency>
  </dependencies>
</project>
`;

/** The commands this needs and are not on PATH: `java` always, `mvn` only to fetch. */
export function missingCommands({ fetched = isFetched() } = {}) {
  const needed = fetched ? ['java'] : ['java', 'mvn'];
  return needed.filter((command) => !onPath(command));
}

export function isFetched() {
  try {
    accessSync(TEST_SERVER_EXECUTABLE, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The executable's path, fetching the server first when it is not there yet. */
export async function fetchTestServer({ log = (line) => console.error(line) } = {}) {
  if (isFetched()) return TEST_SERVER_EXECUTABLE;
  const missing = missingCommands({ fetched: false });
  if (missing.length > 0) {
    throw new Error(
      `the time-skipping test server needs ${missing.join(' and ')} on PATH (java 17+ runs it, mvn fetches ` +
        `io.temporal:temporal-test-server:${TEST_SERVER_VERSION} from Maven Central); on Debian: ` +
        `apt-get install openjdk-17-jre-headless maven`,
    );
  }
  log(`Fetching io.temporal:temporal-test-server:${TEST_SERVER_VERSION} with mvn into ${TEST_SERVER_DIR}`);
  const parent = path.dirname(TEST_SERVER_DIR);
  await mkdir(parent, { recursive: true });
  // Fetched into a scratch directory and renamed whole: a concurrent or interrupted fetch never
  // leaves half a server, and the first of two concurrent fetches to finish wins.
  const scratch = await mkdtemp(path.join(parent, `.fetch-${TEST_SERVER_VERSION}-`));
  try {
    await writeFile(path.join(scratch, 'pom.xml'), POM);
    await run(
      'mvn',
      [
        '--batch-mode',
        '--quiet',
        '--file',
        path.join(scratch, 'pom.xml'),
        // A repository of its own: deleting .tools/ fetches everything again, and ~/.m2 is untouched.
        `-Dmaven.repo.local=${path.join(scratch, 'm2')}`,
        `${DEPENDENCY_PLUGIN}:copy-dependencies`,
        '-DincludeScope=runtime',
        `-DoutputDirectory=${path.join(scratch, 'lib')}`,
      ],
      scratch,
    );
    await rm(path.join(scratch, 'm2'), { recursive: true, force: true });
    await rm(path.join(scratch, 'pom.xml'), { force: true });
    await stat(path.join(scratch, 'lib', `temporal-test-server-${TEST_SERVER_VERSION}.jar`));
    await chmod(scratch, 0o755);
    const wrapper = path.join(scratch, 'temporal-test-server');
    await writeFile(wrapper, WRAPPER);
    await chmod(wrapper, 0o755);
    await rename(scratch, TEST_SERVER_DIR).catch((error) => {
      // Another process got there first; its copy is as good as ours.
      if (!isFetched()) throw error;
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return TEST_SERVER_EXECUTABLE;
}

function onPath(command) {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter(Boolean)
    .some((dir) => {
      try {
        accessSync(path.join(dir, command), constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
}

function run(command, args, cwd) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk) => {
      output = (output + chunk.toString()).slice(-6_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`${command} ${args.join(' ')} failed (exit ${code}):\n${output}`)),
    );
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    // `--missing`: only say (as JSON) which commands a test run would lack, fetching nothing.
    // `--find`: the executable's path when it is fetched, nothing when it is not.
    const mode = process.argv[2];
    if (mode === '--missing') console.log(JSON.stringify(missingCommands()));
    else if (mode === '--find') console.log(isFetched() ? TEST_SERVER_EXECUTABLE : '');
    else console.log(await fetchTestServer());
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
