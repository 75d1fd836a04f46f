import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * Starts test/support/worker-process.ts in a process of its own (so a test can SIGKILL it) and
 * resolves once it polls its task queue. `env` adds to this process's environment; `wrapper` is a
 * command line the worker is started under (e.g. `bwrap … --`), which must pass its signals on;
 * `script` another worker program that prints `ready` the same way.
 */
export function spawnWorkerProcess(
  env: Record<string, string>,
  options: { wrapper?: readonly string[]; script?: string } = {},
): Promise<ChildProcess> {
  const argv = [
    ...(options.wrapper ?? []),
    process.execPath,
    '--import',
    'tsx',
    options.script ?? path.join(__dirname, 'worker-process.ts'),
  ];
  const child = spawn(argv[0]!, argv.slice(1), {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`worker process exited early (${code})`)));
  });
}

/** SIGKILLs the worker process and waits until it is gone: no shutdown, no goodbye to the server. */
export async function killWorkerProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

/** The lines worker-process.ts's counting tools appended to MARKER_DIR/attempts, one per attempt (`pid toolCallId`). */
export function toolAttempts(markerDir: string): Promise<string[]> {
  return readFile(path.join(markerDir, 'attempts'), 'utf8').then(
    (text) => text.trim().split('\n'),
    () => [],
  );
}
