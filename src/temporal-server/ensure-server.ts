import path from 'node:path';
import type { ConnectionSettings } from '../shared/connection-settings';
import { claimDataFile } from './data-file-claim';
import { type RunningServer, startDevServer } from './dev-server';
import { isListening } from '../platform/free-port';
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
  alongside?: ServerCompanions,
): Promise<EnsuredServer> {
  if (settings.address) return { address: settings.address };
  const embedded = embeddedServerSettings(env);
  const address = `127.0.0.1:${embedded.port}`;
  if (await isListening('127.0.0.1', embedded.port)) return { address };
  try {
    const server = await startEmbeddedServer(embedded, settings.namespace, log, alongside);
    return { address: server.address, embedded: server };
  } catch (error) {
    // Another process started it meanwhile.
    if (error instanceof AlreadyServed) return { address };
    throw error;
  }
}

/** The data file's server answers already: use it rather than start another on the same file. */
export class AlreadyServed extends Error {}

/**
 * What lives as long as a server this process started does, started once it serves, with the
 * server's process id (the CLI starts the Web UI's codec server here, which may outlive the CLI).
 */
export type ServerCompanions = (serverPid: number, embedded: EmbeddedServerSettings) => void;

export async function startEmbeddedServer(
  embedded: EmbeddedServerSettings,
  namespace: string,
  log: (line: string) => void,
  alongside?: ServerCompanions,
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
    alongside?.(server.pid, embedded);
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
