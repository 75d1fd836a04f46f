import { isIP } from 'node:net';

/** The names of address ranges `--trust-proxy` takes besides addresses and CIDR ranges. */
const RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/**
 * The proxies `--trust-proxy` names (comma-separated addresses, CIDR ranges, or `loopback`,
 * `linklocal`, `uniquelocal`), or why not. A hop count or "trust every peer" is refused: either
 * would believe the forwarded headers of a client that reaches the gateway directly.
 */
export function parseTrustedProxies(text: string): string[] {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) throw new Error('--trust-proxy names the proxy: its address, or a CIDR range');
  for (const entry of entries) {
    if (RANGE_NAMES.has(entry)) continue;
    const [address, bits, ...rest] = entry.split('/');
    const family = isIP(address ?? '');
    const maxBits = family === 6 ? 128 : 32;
    const bitsOk = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= maxBits);
    if (family === 0 || !bitsOk || rest.length > 0)
      throw new Error(
        `--trust-proxy takes the proxy's addresses or CIDR ranges (or loopback, linklocal, uniquelocal), not ${JSON.stringify(entry)}`,
      );
  }
  return entries;
}
