import net from 'node:net';

export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A free port that is none of `keepFree`: ports a caller has chosen but not bound yet are free to
 * the kernel too, and a server that took one would answer in its place.
 */
export async function freePortExcept(keepFree: Iterable<number>, host = '127.0.0.1'): Promise<number> {
  const kept = new Set(keepFree);
  for (;;) {
    const port = await freePort(host);
    if (!kept.has(port)) return port;
  }
}

export function isListening(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (result: boolean) => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}
