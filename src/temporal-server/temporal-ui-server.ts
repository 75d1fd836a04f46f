import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { childEnvironment } from '../tools/exec/child-environment';

export interface UiServerSettings {
  /** The Temporal frontend the UI reads. */
  address: string;
  namespace: string;
  uiPort: number;
  /** The remote codec the UI asks to decode payloads. */
  codecEndpoint: string | undefined;
  stdio: ['ignore', 'pipe' | number, 'pipe' | number];
}

/**
 * Temporal's Web UI server for the frontend at `settings.address`, on 127.0.0.1:`uiPort`, run by a
 * shell that ends it once the server process `serverPid` is gone (however it ends: stop(), a crash,
 * a kill by another process after detach()). Its configuration is written in `dir`.
 */
export async function startUiServer(
  program: string,
  dir: string,
  serverPid: number,
  settings: UiServerSettings,
): Promise<ChildProcess> {
  const configDir = path.join(dir, 'temporal-ui-config');
  await mkdir(configDir, { recursive: true, mode: 0o700 });
  // JSON is YAML: the UI server reads this as its `embedded` environment's config.
  await writeFile(path.join(configDir, 'embedded.yaml'), `${JSON.stringify(uiConfig(settings), null, 2)}\n`, {
    mode: 0o600,
  });
  const watcher = [
    '"$0" --root "$1" --config temporal-ui-config --env embedded start &',
    'ui=$!',
    'trap \'kill "$ui" 2>/dev/null; exit 0\' TERM INT',
    'while kill -0 "$2" 2>/dev/null && kill -0 "$ui" 2>/dev/null; do sleep 1; done',
    'kill "$ui" 2>/dev/null',
    'wait "$ui"',
  ].join('\n');
  const child = spawn('/bin/sh', ['-c', watcher, program, dir, String(serverPid)], {
    cwd: dir,
    env: childEnvironment(process.env),
    // A group of its own: stop() ends the shell and the UI server together.
    detached: true,
    stdio: settings.stdio,
  });
  child.on('error', () => undefined);
  return child;
}

function uiConfig(settings: UiServerSettings) {
  const origins = [`http://127.0.0.1:${settings.uiPort}`, `http://localhost:${settings.uiPort}`];
  return {
    host: '127.0.0.1',
    port: settings.uiPort,
    temporalGrpcAddress: settings.address,
    enableUi: true,
    defaultNamespace: settings.namespace,
    // The page is served over plain HTTP on loopback, as the CLI's dev server served it.
    cors: { cookieInsecure: true, allowOrigins: origins },
    codec: { endpoint: settings.codecEndpoint ?? '' },
    disableNewsFetch: true,
    notifyOnNewVersion: false,
    hideLogs: true,
  };
}

/** Waits until the Web UI answers on 127.0.0.1:`port`. */
export async function waitForUi(
  port: number,
  timeoutMs: number,
  exited: () => string | undefined,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    const why = exited();
    if (why) throw new Error(why);
    try {
      const response = await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2_000) });
      await response.arrayBuffer();
      if (response.ok) return;
      lastError = new Error(`HTTP ${response.status}`);
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(
    `the Web UI did not answer on 127.0.0.1:${port} within ${timeoutMs} ms (${(lastError as Error)?.message ?? 'no error'})`,
  );
}
