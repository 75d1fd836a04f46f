import type { WireServer } from './model-wire';

/** Throws a clear error now, rather than on every model call, for a URL that is not http(s). */
export function checkedEndpointUrl(url: string | undefined, name: string, example: string): void {
  if (url === undefined) return;
  if (!/^https?:\/\//.test(url)) {
    throw new Error(`${name} must be an http(s) URL such as ${example}, got ${JSON.stringify(url)}`);
  }
  new URL(url);
}

/** Where a wire's requests go, from its base URL: a wire's `server`, none when unreadable. */
export function serverOf(baseURL: string): { server?: WireServer } {
  try {
    const { hostname, port } = new URL(baseURL);
    if (!hostname) return {};
    return { server: { address: hostname, ...(port ? { port: Number(port) } : {}) } };
  } catch {
    return {};
  }
}
