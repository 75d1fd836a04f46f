import { readFileSync } from 'node:fs';
import { Connection } from '@temporalio/client';
import { NativeConnection, type TLSConfig } from '@temporalio/worker';
import type { ConnectionSettings } from '../shared/connection-settings';

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

export function connectClient(settings: ConnectionSettings, address: string): Promise<Connection> {
  return Connection.connect({ address, tls: tlsConfig(settings), apiKey: settings.apiKey });
}

export function connectWorker(settings: ConnectionSettings, address: string): Promise<NativeConnection> {
  return NativeConnection.connect({ address, tls: tlsConfig(settings), apiKey: settings.apiKey });
}
