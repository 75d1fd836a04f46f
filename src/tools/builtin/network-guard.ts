import { lookup as dnsLookup } from 'node:dns';
import { BlockList, isIP } from 'node:net';

/**
 * Addresses a fetch made on the model's behalf must not reach by default: loopback, private and
 * link-local networks (cloud metadata at 169.254.169.254), carrier-grade NAT, multicast, reserved
 * and documentation ranges, and their IPv6 counterparts (IPv4-mapped addresses included).
 */
const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  return !NON_PUBLIC.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** Refused because the host is or resolves to a non-public address. */
export class BlockedAddressError extends Error {
  readonly code = 'EBLOCKEDADDRESS';
  constructor(host: string, address: string) {
    super(
      `${host} ${host === address ? 'is' : `resolves to ${address}, which is`} a private, loopback or reserved address`,
    );
    this.name = 'BlockedAddressError';
  }
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | Array<{ address: string; family: number }>,
  family?: number,
) => void;

/**
 * A `lookup` for http(s).request that fails for non-public addresses. The check happens on the very
 * addresses the socket then connects to, so a name that resolves differently the second time (DNS
 * rebinding) gains nothing. Literal IP hosts never reach a lookup: check them with isPublicAddress.
 */
export function publicOnlyLookup(
  hostname: string,
  options: { all?: boolean; family?: number | string },
  callback: LookupCallback,
): void {
  dnsLookup(hostname, { ...options, all: true } as { all: true }, (error, addresses) => {
    if (error) return callback(error, options.all ? [] : '');
    const blocked = addresses.find((entry) => !isPublicAddress(entry.address));
    if (blocked) return callback(new BlockedAddressError(hostname, blocked.address), options.all ? [] : '');
    if (options.all) return callback(null, addresses);
    const first = addresses[0];
    if (!first)
      return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '');
    callback(null, first.address, first.family);
  });
}
