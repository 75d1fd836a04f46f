import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import {
  type TemporalConnectionOptions,
  temporalConnectionOptions,
} from '../client/temporal-connection-options';
import type { ConnectionSettings } from '../shared/connection-settings';
import { connectWhenServing } from './server-readiness';
import { tlsRefusal } from './tls-refusal';

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
  const connect = () =>
    explainingTlsRefusal(() => Connection.connect({ address, ...options }), address, options);
  return log ? connectWhenServing(connect, serverWait(settings, address, log)) : connect();
}

/** A worker connection; with `log`, a server still starting is waited for as by `connectClient`. */
export async function connectWorker(
  settings: ConnectionSettings,
  address: string,
  log?: (line: string) => void,
): Promise<NativeConnection> {
  const options = temporalConnectionOptions(settings);
  const connect = () =>
    explainingTlsRefusal(() => NativeConnection.connect({ address, ...options }), address, options);
  return log ? connectWhenServing(connect, serverWait(settings, address, log)) : connect();
}

/**
 * `connect`, whose failure over TLS says why when the server refuses the handshake (a client
 * certificate missing or not accepted, a CA or server name that does not fit): such a failure is
 * not waited out as a server still starting.
 */
async function explainingTlsRefusal<C>(
  connect: () => Promise<C>,
  address: string,
  options: TemporalConnectionOptions,
): Promise<C> {
  try {
    return await connect();
  } catch (error) {
    if (options.tls === false) throw error;
    const refusal = await tlsRefusal(address, options.tls);
    if (refusal === undefined) throw error;
    throw new Error(`the Temporal server at ${address} refuses the TLS connection: ${refusal}`, {
      cause: error,
    });
  }
}

function serverWait(settings: ConnectionSettings, address: string, log: (line: string) => void) {
  return { address, namespace: settings.namespace, timeoutMs: settings.serverWaitMs, log };
}
