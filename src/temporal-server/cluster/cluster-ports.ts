import net from 'node:net';

/**
 * Temporal records each service's membership port in a PostgreSQL `smallint` column
 * (cluster_membership.rpc_port): a service on a port above this cannot join the cluster.
 */
export const MAX_MEMBERSHIP_PORT = 32_767;

/** Where the search for each kind of port begins: Temporal's own defaults, PostgreSQL's plus one. */
export const FIRST_PORT = { postgres: 5433, grpc: 7234, membership: 6933, http: 7243 } as const;

/** Whether a server could listen on `host`:`port` now (127.0.0.1 by default). */
export function canBind(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/**
 * The first port from `first` up to `last` that is neither in `taken` nor in use. Chosen ports are
 * counted up rather than asked of the kernel, whose free ports lie above MAX_MEMBERSHIP_PORT.
 */
export async function choosePort(
  first: number,
  taken: ReadonlySet<number>,
  last = 65_535,
  host = '127.0.0.1',
): Promise<number> {
  for (let port = first; port <= last; port++) {
    if (!taken.has(port) && (await canBind(port, host))) return port;
  }
  throw new Error(`no free port on ${host} between ${first} and ${last}`);
}
