import { execFile, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { TestWorkflowEnvironment } from '@temporalio/testing';

/**
 * Temporal's time-skipping test server: the Java one from Maven Central, fetched by
 * scripts/fetch-test-server.mjs in the tests' global setup (test-servers.ts; the SDK's own download
 * needs the internet at large), started by @temporalio/testing as an existing executable.
 */

const FETCH_SCRIPT = path.resolve(__dirname, '..', '..', 'scripts', 'fetch-test-server.mjs');

export const whatIsMissing = (missing: string[]) =>
  `the time-skipping test server needs ${missing.join(' and ')} on PATH (java 17+ runs it, mvn ` +
  'fetches it from Maven Central); on Debian: apt-get install openjdk-17-jre-headless maven';

/** Commands the test server needs and this machine lacks, as the fetch script says. */
export function missingCommands(): string[] {
  const result = spawnSync(process.execPath, [FETCH_SCRIPT, '--missing'], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${FETCH_SCRIPT} --missing failed: ${result.stderr}`);
  return JSON.parse(result.stdout) as string[];
}

/** A time-skipping environment on a server of its own (a free port). */
export async function startTestServer(): Promise<TestWorkflowEnvironment> {
  const executable = await fetchedTestServer();
  const start = () =>
    TestWorkflowEnvironment.createTimeSkipping({
      server: { executable: { type: 'existing-path', path: executable } },
    });
  try {
    return await start();
  } catch (first) {
    // The SDK gives the server 5 s to answer; a JVM on a busy machine may take longer once, and
    // starts faster the second time (its classes are then in the page cache).
    if (!String(first).includes('did not start within')) throw first;
    try {
      return await start();
    } catch (second) {
      throw new Error(
        `the time-skipping test server did not start: ${String(second)}\n` +
          `its output, from ${serverLog(executable)}:\n${await logTail(executable)}`,
      );
    }
  }
}

/**
 * The server as the global setup fetched it. Never fetched here: a first fetch takes longer than
 * the hook that asks may wait.
 */
async function fetchedTestServer(): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [FETCH_SCRIPT, '--find']);
  const executable = stdout.trim();
  if (!executable) {
    throw new Error(
      `the time-skipping test server is not fetched: jest's global setup fetches it before any test starts (test/support/test-servers.ts), and says why when it cannot`,
    );
  }
  return executable;
}

const serverLog = (executable: string) => path.join(path.dirname(executable), 'server.log');

async function logTail(executable: string): Promise<string> {
  const log = serverLog(executable);
  if (!existsSync(log)) return '(none)';
  return (await readFile(log, 'utf8')).split('\n').slice(-30).join('\n');
}
