import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Where a worker answers its orchestrator's probes, as `host:port`. */
export interface HealthEndpointAddress {
  host: string;
  port: number;
}

/** The probe server, listening. */
export interface HealthEndpoint {
  /** The port it listens on (the one asked for, or the one given for 0). */
  port: number;
  close(): Promise<void>;
}

/**
 * Probes for an orchestrator (Kubernetes, systemd, a load balancer): `GET /healthz` answers 200
 * while the process serves HTTP at all (its event loop turns), and `GET /ready` answers 200 only
 * while `ready()` says the worker polls its task queue: 503 while it connects or waits for its
 * server, and again from the moment it is told to stop, while it drains its running activities.
 * Nothing is read from a request but its method and path.
 */
export async function startHealthEndpoint(
  address: HealthEndpointAddress,
  ready: () => boolean,
): Promise<HealthEndpoint> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    const answer = (status: number, body: Record<string, unknown>) => {
      response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      response.end(request.method === 'HEAD' ? undefined : JSON.stringify(body));
    };
    if (request.method !== 'GET' && request.method !== 'HEAD') answer(405, { error: 'GET only' });
    else if (path === '/healthz') answer(200, { live: true });
    else if (path === '/ready') {
      const polling = ready();
      answer(polling ? 200 : 503, { ready: polling });
    } else answer(404, { error: 'not found: /healthz and /ready are served' });
  });
  // Probes are tiny: a client that dawdles over its headers is not waited for.
  server.headersTimeout = 5_000;
  server.requestTimeout = 5_000;
  await listen(server, address);
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function listen(server: Server, { host, port }: HealthEndpointAddress): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * `--health-port PORT` on the command line, else DURABLE_AGENT_HEALTH_PORT; bound to
 * DURABLE_AGENT_HEALTH_HOST (default 127.0.0.1; a pod's probes come from its node, so there it is
 * 0.0.0.0). Undefined when neither asks for probes.
 */
export function healthEndpointFrom(
  flag: string | undefined,
  env: NodeJS.ProcessEnv,
): HealthEndpointAddress | undefined {
  const text = flag ?? env.DURABLE_AGENT_HEALTH_PORT;
  if (text === undefined || text === '') return undefined;
  const port = Number(text);
  if (!/^\d+$/.test(text) || port < 1 || port > 65_535) {
    throw new Error(`the health port is a number from 1 to 65535, not ${JSON.stringify(text)}`);
  }
  return { host: env.DURABLE_AGENT_HEALTH_HOST || '127.0.0.1', port };
}
