import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { temporalConnectionOptions } from '../client/temporal-connection-options';
import type { ConnectionSettings } from '../shared/connection-settings';
import { connectWhenServing } from './server-readiness';

/**
 * A client connection. With `log`, a server still starting (not listening yet, or without the
 * namespace yet) is waited for up to `settings.serverWaitMs`, saying so through `log`.
 */
export async function connectClient(
  settings: ConnectionSettings,
  address: string,
  log?: (line: string) => void,
): Promise<Connection> {
  const options = temporalConnectionOptions(settings);
  const connect = () => Connection.connect({ address, ...options });
  return log ? connectWhenServing(connect, serverWait(settings, address, log)) : connect();
}

/** A worker connection; with `log`, a server still starting is waited for as by `connectClient`. */
export async function connectWorker(
  settings: ConnectionSettings,
  address: string,
  log?: (line: string) => void,
): Promise<NativeConnection> {
  const options = temporalConnectionOptions(settings);
  const connect = () => NativeConnection.connect({ address, ...options });
  return log ? connectWhenServing(connect, serverWait(settings, address, log)) : connect();
}

function serverWait(settings: ConnectionSettings, address: string, log: (line: string) => void) {
  return { address, namespace: settings.namespace, timeoutMs: settings.serverWaitMs, log };
}
