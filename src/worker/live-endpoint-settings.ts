/** Where a worker's push endpoint listens and the URL other processes reach it at; undefined when off. */
export interface LiveEndpointSettings {
  host: string;
  port: number;
  advertisedUrl?: string;
}

/**
 * AGENT_LIVE_ENDPOINT: `host:port` to listen on (default `127.0.0.1:0`, a free loopback port: watchers
 * and workers on this machine), or `off`. AGENT_LIVE_URL: the URL others reach it at, needed when it
 * listens on all interfaces for workers and watchers on other machines (`http://worker-3:7290`).
 * Throws on a malformed value.
 */
export function liveEndpointFromEnv(env: NodeJS.ProcessEnv): LiveEndpointSettings | undefined {
  const listen = (env.AGENT_LIVE_ENDPOINT ?? '').trim() || '127.0.0.1:0';
  if (listen === 'off') return undefined;
  const match = /^(\[[0-9a-fA-F:]+\]|[^:\s]+):(\d{1,5})$/.exec(listen);
  const port = match ? Number(match[2]) : NaN;
  if (!match || port > 65_535) {
    throw new Error(
      `AGENT_LIVE_ENDPOINT must be host:port (such as 0.0.0.0:7290) or off, not ${JSON.stringify(listen)}`,
    );
  }
  const host = match[1]!.replace(/^\[|\]$/g, '');
  const advertised = (env.AGENT_LIVE_URL ?? '').trim();
  if (advertised && !/^https?:\/\/[^\s/]+(\/\S*)?$/.test(advertised)) {
    throw new Error(
      `AGENT_LIVE_URL must be an http(s) URL such as http://worker-3:7290, not ${JSON.stringify(advertised)}`,
    );
  }
  if (!advertised && (host === '0.0.0.0' || host === '::')) {
    throw new Error(
      `AGENT_LIVE_ENDPOINT listens on all interfaces (${listen}): set AGENT_LIVE_URL to the URL others reach it at`,
    );
  }
  return { host, port, ...(advertised ? { advertisedUrl: advertised } : {}) };
}
