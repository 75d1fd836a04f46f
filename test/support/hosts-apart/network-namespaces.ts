import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';

/**
 * Hosts apart on one machine: each host a network namespace of its own with one address, all joined
 * by veth links into a bridge that lives in a namespace of its own as well, so nothing is added to
 * the namespace this process runs in and no link reaches a real network.
 *
 * The addresses are 127.0.0.0/8 ones, and no packet of theirs can leave: the bridge's namespace has
 * no other link and no address, and every host has only its loopback and its one link. In each host
 * the kernel's `local 127.0.0.0/8` route is removed (127.0.0.1 stays local), so the link's /24 is
 * what reaches the others, and `route_localnet` lets 127.x packets in and out of a link at all.
 */
export interface HostsNetwork {
  /** The namespace a host runs in; `ip netns exec` it. */
  namespaceOf(host: string): string;
  addressOf(host: string): string;
  /** Every namespace made, the bridge's included. */
  namespaces: string[];
  /** The bridge's namespace and device, where a capture sees every hop. */
  bridge: { namespace: string; device: string };
  /** `argv` as a command run inside `host`'s namespace. */
  inHost(host: string, argv: readonly string[]): string[];
  /** Cuts a host off: its end of the link goes down, as a machine whose cable is pulled. */
  cut(host: string): void;
  /** Deletes every namespace made (their links go with them). Safe to call twice. */
  remove(): void;
}

/** The subnet on the links. */
const SUBNET = '127.77.0';

/** Why network namespaces cannot be made here, if they cannot. */
export function whatNamespacesNeed(what: string): string | undefined {
  if (process.platform !== 'linux') return `${what} needs Linux network namespaces`;
  if (process.getuid?.() !== 0) return `${what} makes network namespaces, which needs root`;
  const ip = spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' });
  if (ip.error || ip.status !== 0) {
    return `${what} needs \`ip netns\` (iproute2): ${ip.error?.message ?? ip.stderr.trim()}`;
  }
  return undefined;
}

function run(argv: readonly string[]): SpawnSyncReturns<string> {
  const result = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 10_000 });
  if (result.error || result.status !== 0) {
    throw new Error(`${argv.join(' ')} failed: ${result.error?.message ?? result.stderr.trim()}`);
  }
  return result;
}

/**
 * Makes a host per name, numbered from `.10` in the links' subnet in the order given. A name is
 * short (namespaces and devices are named from it with a random prefix unique to the run).
 */
export function makeHostsNetwork(hosts: readonly string[]): HostsNetwork {
  const prefix = `da${randomBytes(3).toString('hex')}`;
  const bridgeNamespace = `${prefix}-br`;
  const namespaces = new Map(hosts.map((host) => [host, `${prefix}-${host}`]));
  const addresses = new Map(hosts.map((host, index) => [host, `${SUBNET}.${10 + index}`]));
  const made: string[] = [];
  // Every process in these namespaces is one this run started: killed, so the namespace and its
  // link go when it is deleted (a namespace lives on while a process is in it).
  const remove = () => {
    for (const namespace of made.splice(0).reverse()) {
      const pids = spawnSync('ip', ['netns', 'pids', namespace], { encoding: 'utf8', timeout: 10_000 });
      for (const pid of (pids.stdout ?? '').split('\n').filter(Boolean)) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          // Gone already.
        }
      }
      spawnSync('ip', ['netns', 'del', namespace], { timeout: 10_000 });
    }
  };
  const namespaceOf = (host: string) => {
    const namespace = namespaces.get(host);
    if (!namespace) throw new Error(`no host ${host} in this network`);
    return namespace;
  };
  try {
    run(['ip', 'netns', 'add', bridgeNamespace]);
    made.push(bridgeNamespace);
    run(['ip', '-n', bridgeNamespace, 'link', 'add', 'br0', 'type', 'bridge']);
    run(['ip', '-n', bridgeNamespace, 'link', 'set', 'br0', 'up']);
    hosts.forEach((host, index) => {
      const namespace = namespaceOf(host);
      run(['ip', 'netns', 'add', namespace]);
      made.push(namespace);
      const inside = (...argv: string[]) => run(['ip', 'netns', 'exec', namespace, ...argv]);
      inside('sysctl', '-qw', 'net.ipv4.conf.all.route_localnet=1', 'net.ipv4.conf.default.route_localnet=1');
      run(['ip', '-n', namespace, 'link', 'set', 'lo', 'up']);
      run(['ip', '-n', namespace, 'route', 'del', 'local', '127.0.0.0/8', 'dev', 'lo', 'table', 'local']);
      const port = `port${index}`;
      run([
        'ip',
        '-n',
        bridgeNamespace,
        'link',
        'add',
        port,
        'type',
        'veth',
        'peer',
        'name',
        'eth0',
        'netns',
        namespace,
      ]);
      run(['ip', '-n', bridgeNamespace, 'link', 'set', port, 'master', 'br0', 'up']);
      run(['ip', '-n', namespace, 'addr', 'add', `${addresses.get(host)}/24`, 'dev', 'eth0']);
      run(['ip', '-n', namespace, 'link', 'set', 'eth0', 'up']);
    });
  } catch (error) {
    remove();
    throw error;
  }
  return {
    namespaces: [bridgeNamespace, ...namespaces.values()],
    namespaceOf,
    addressOf: (host) => {
      namespaceOf(host);
      return addresses.get(host)!;
    },
    bridge: { namespace: bridgeNamespace, device: 'br0' },
    inHost: (host, argv) => ['ip', 'netns', 'exec', namespaceOf(host), ...argv],
    cut: (host) => run(['ip', '-n', namespaceOf(host), 'link', 'set', 'eth0', 'down']),
    remove,
  };
}

/** Whether a namespace of that name exists (for checking that nothing is left behind). */
export function namespaceExists(namespace: string): boolean {
  return existsSync(`/run/netns/${namespace}`);
}
