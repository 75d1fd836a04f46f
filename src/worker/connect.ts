import { readFileSync } from 'node:fs';
import { Connection } from '@temporalio/client';
import { NativeConnection, type TLSConfig } from '@temporalio/worker';
import type { ConnectionSettings } from '../shared/connection-settings';
import { connectWhenServing } from './server-readiness';

function tlsConfig(settings: ConnectionSettings): TLSConfig | boolean {
  const useTls = settings.tls ?? Boolean(settings.apiKey || settings.tlsCertPath || settings.tlsCaPath);
  if (!useTls) return false;
  if (!settings.tlsCertPath && !settings.tlsCaPath && !settings.tlsServerName) return true;
  return {
    serverNameOverride: settings.tlsServerName,
    serverRootCACertificate: settings.tlsCaPath ? readFileSync(settings.tlsCaPath) : undefined,
    clientCertPair:
      settings.tlsCertPath && settings.tlsKeyPath
        ? { crt: readFileSync(settings.tlsCertPath), key: readFileSync(settings.tlsKeyPath) }
        : undefined,
  };
}

/**
 * A client connection. With `log`, a server still starting (not listening yet, or without the
 * namespace yet) is waited for up to `settings.serverWaitMs`, saying so through `log`.
 */
export function connectClient(
  settings: ConnectionSettings,
  address: string,
  log?: (line: string) => void,
): Promise<Connection> {
  const connect = () => Connection.connect({ address, tls: tlsConfig(settings), apiKey: settings.apiKey });
  return log ? connectWhenServing(connect, serverWait(settings, address, log)) : connect();
}

/** A worker connection; with `log`, a server still starting is waited for as by `connectClient`. */
export function connectWorker(
  settings: ConnectionSettings,
  address: string,
  log?: (line: string) => void,
): Promise<NativeConnection> {
  const connect = () =>
    NativeConnection.connect({ address, tls: tlsConfig(settings), apiKey: settings.apiKey });
  return log ? connectWhenServing(connect, serverWait(settings, address, log)) : connect();
}

function serverWait(settings: ConnectionSettings, address: string, log: (line: string) => void) {
  return { address, namespace: settings.namespace, timeoutMs: settings.serverWaitMs, log };
}
