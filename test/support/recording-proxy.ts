import net from 'node:net';
import tls from 'node:tls';

export interface RecordingProxy {
  port: number;
  /** Every byte that crossed it so far, both ways, as it crossed the wire. */
  recorded(): Buffer;
  close(): Promise<void>;
}

/**
 * A TCP relay on 127.0.0.1 that keeps a copy of what it carries: what anyone on the link would
 * see. `upstream` is asked at each connection, so the proxy can start before what it fronts.
 * With `impersonate` (a certificate and key), it is a man in the middle instead: it ends the
 * client's TLS with that certificate, opens its own to the upstream, and records the plaintext it
 * could read.
 */
export async function startRecordingProxy(
  upstream: () => number,
  impersonate?: { cert: string; key: string },
): Promise<RecordingProxy> {
  const chunks: Buffer[] = [];
  const sockets = new Set<net.Socket>();
  const relay = (client: net.Socket, server: net.Socket) => {
    for (const socket of [client, server]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        server.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => chunks.push(Buffer.from(chunk)));
    server.on('data', (chunk: Buffer) => chunks.push(Buffer.from(chunk)));
    client.pipe(server).on('close', () => client.destroy());
    server.pipe(client).on('close', () => server.destroy());
  };
  const proxy = impersonate
    ? tls.createServer(impersonate, (client) =>
        relay(client, tls.connect({ host: '127.0.0.1', port: upstream(), rejectUnauthorized: false })),
      )
    : net.createServer((client) => relay(client, net.connect({ host: '127.0.0.1', port: upstream() })));
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    port: (proxy.address() as net.AddressInfo).port,
    recorded: () => Buffer.concat(chunks),
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        proxy.close(() => resolve());
      }),
  };
}
