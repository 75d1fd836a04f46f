import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import path from 'node:path';
import type { ConnectionSettings } from '../shared/connection-settings';
import { childEnvironment } from '../tools/exec/child-environment';
import { claimDataFile } from './data-file-claim';
import { dataConverterVariables } from './data-converter';
import { type RunningServer, startDevServer } from './dev-server';
import { isListening } from './free-port';
import { dataDir, ensurePrivateDirectory } from '../platform/paths';

export interface EnsuredServer {
  address: string;
  /** Set when this process started the server and must stop it. */
  embedded?: RunningServer;
}

export interface EmbeddedServerSettings {
  port: number;
  uiPort: number;
  /** Where the codec server the Web UI asks to decode payloads listens. */
  codecPort: number;
  dbFile: string;
}

export function embeddedServerSettings(env: NodeJS.ProcessEnv): EmbeddedServerSettings {
  const port = (name: string, fallback: number) => {
    const value = Number(env[name] ?? fallback);
    if (!Number.isInteger(value) || value < 1 || value > 65_535)
      throw new Error(`${name} must be a port number, got ${env[name]}`);
    return value;
  };
  return {
    port: port('DURABLE_AGENT_SERVER_PORT', 7233),
    uiPort: port('DURABLE_AGENT_UI_PORT', 8233),
    codecPort: port('DURABLE_AGENT_CODEC_PORT', 8234),
    dbFile: path.join(dataDir(env), 'temporal.db'),
  };
}

/**
 * TEMPORAL_ADDRESS when set; otherwise a server already answering on the embedded port (another
 * `durable-agent server`, say); otherwise the embedded Temporal server, started now.
 */
export async function ensureTemporalServer(
  settings: ConnectionSettings,
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
): Promise<EnsuredServer> {
  if (settings.address) return { address: settings.address };
  const embedded = embeddedServerSettings(env);
  const address = `127.0.0.1:${embedded.port}`;
  if (await isListening('127.0.0.1', embedded.port)) return { address };
  try {
    const server = await startEmbeddedServer(embedded, settings.namespace, env, log);
    return { address: server.address, embedded: server };
  } catch (error) {
    // Another process started it meanwhile.
    if (error instanceof AlreadyServed) return { address };
    throw error;
  }
}

/** The data file's server answers already: use it rather than start another on the same file. */
export class AlreadyServed extends Error {}

export async function startEmbeddedServer(
  embedded: EmbeddedServerSettings,
  namespace: string,
  env: NodeJS.ProcessEnv,
  log: (line: string) => void,
): Promise<RunningServer> {
  ensurePrivateDirectory(path.dirname(embedded.dbFile));
  const claim = await claimDataFile(embedded.dbFile, {
    served: () => isListening('127.0.0.1', embedded.port),
    log,
  });
  if (claim === 'served') {
    throw new AlreadyServed(
      `a Temporal server with ${embedded.dbFile} already answers on 127.0.0.1:${embedded.port}`,
    );
  }
  log(
    `Starting the embedded Temporal server on 127.0.0.1:${embedded.port} (web UI http://127.0.0.1:${embedded.uiPort}, data ${embedded.dbFile}).`,
  );
  let server: RunningServer;
  try {
    server = await startDevServer({
      port: embedded.port,
      uiPort: embedded.uiPort,
      uiCodecEndpoint: `http://127.0.0.1:${embedded.codecPort}`,
      keepFree: [embedded.codecPort],
      dbFile: embedded.dbFile,
      namespace,
      logFile: path.join(path.dirname(embedded.dbFile), 'temporal-server.log'),
      log,
    });
  } catch (error) {
    claim.release();
    throw error;
  }
  if (server.pid !== undefined) {
    claim.recordServer(server.pid);
    startCodecServerFor(
      server.pid,
      embedded,
      env,
      path.join(path.dirname(embedded.dbFile), 'codec-server.log'),
    );
  }
  return {
    ...server,
    // Detached, the server keeps its claim for as long as its process lives.
    async stop() {
      claim.markStopping();
      await server.stop();
      claim.release();
    },
  };
}

/**
 * The Web UI's codec server, in a process of its own that lives as long as the server does (which
 * may outlive this process). If one already listens on the port, the new one exits at once.
 */
function startCodecServerFor(
  serverPid: number,
  embedded: EmbeddedServerSettings,
  env: NodeJS.ProcessEnv,
  logFile: string,
): void {
  // Under a TypeScript loader (tests) the CLI is its source; built, it is the JavaScript beside this file.
  const cli = path.join(__dirname, '..', 'cli', __filename.endsWith('.ts') ? 'cli.ts' : 'cli.js');
  const loader = __filename.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const out = openSync(logFile, 'a', 0o600);
  const child = spawn(
    process.execPath,
    [...loader, cli, 'codec-server', '--port', String(embedded.codecPort), '--exit-with', String(serverPid)],
    {
      env: codecServerEnvironment(env, embedded),
      detached: true,
      stdio: ['ignore', out, out],
    },
  );
  closeSync(out);
  child.unref();
}

/**
 * What the codec server is given of this process's environment: what a shell needs, the payload
 * codec's and blob store's settings, the browser origins it serves. Never the model's key, the RAP
 * secret or other credentials it has no use for.
 */
export function codecServerEnvironment(
  env: NodeJS.ProcessEnv,
  embedded: Pick<EmbeddedServerSettings, 'uiPort'>,
): Record<string, string> {
  return {
    ...childEnvironment(env, [
      ...dataConverterVariables(env),
      'DURABLE_AGENT_CODEC_ORIGINS',
      'NODE_EXTRA_CA_CERTS',
    ]),
    DURABLE_AGENT_UI_PORT: String(embedded.uiPort),
  };
}
