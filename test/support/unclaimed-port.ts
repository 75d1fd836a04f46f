import { readFileSync } from 'node:fs';
import { MAX_MEMBERSHIP_PORT, canBind } from '../../src/temporal-server/cluster/cluster-ports';
import { freePortExcept } from '../../src/platform/free-port';

/**
 * A free port that no other process is handed while this one has not bound it yet, as 7233 is on a
 * person's machine. A port from `freePort()` is in the kernel's ephemeral range: until the server
 * binds it (seconds, when a first start prepares its data file), any other test process's
 * `listen(0)` can get it, and a test waiting for the port to open would then talk to that process.
 * Ports above the ephemeral range are never handed out; those below it are, by the embedded server's
 * membership port counter, up to MAX_MEMBERSHIP_PORT.
 */
export async function unclaimedPort(keepFree: readonly number[] = []): Promise<number> {
  const [low, high] = ephemeralRange();
  const ranges: Array<[number, number]> = [
    [high + 1, 65_535],
    [MAX_MEMBERSHIP_PORT + 1, low - 1],
  ];
  const usable = ranges.filter(([from, to]) => to - from >= 100);
  if (usable.length === 0) return freePortExcept(keepFree);
  const [from, to] = usable[0]!;
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = from + Math.floor(Math.random() * (to - from + 1));
    if (!keepFree.includes(port) && (await canBind(port))) return port;
  }
  throw new Error(`no free port in ${from}-${to} after 100 tries`);
}

function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/);
    return [Number(low), Number(high)];
  } catch {
    return [32_768, 60_999];
  }
}

/** `count` distinct unclaimed ports. */
export async function unclaimedPorts(count: number): Promise<number[]> {
  const ports: number[] = [];
  while (ports.length < count) ports.push(await unclaimedPort(ports));
  return ports;
}
