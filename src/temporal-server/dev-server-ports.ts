import { readFile, writeFile } from 'node:fs/promises';
import { MAX_MEMBERSHIP_PORT, canBind, choosePort } from './cluster/cluster-ports';
import { TEMPORAL_SERVICES, type TemporalService } from './cluster/temporal-services';
import { freePortExcept } from '../platform/free-port';

type MembershipPorts = Record<TemporalService, number>;

/**
 * The membership ports of the four services. Temporal stores membership ports in a smallint
 * (cluster-ports.ts), so they are counted up from a random point below that limit rather than
 * asked of the kernel; the random start keeps servers started at once apart. A server on a data
 * file takes the ports it had last time when they are free (kept in `portsFile`): the database
 * still lists the last run's members for a while, and a server whose members are not those takes
 * 10 s longer to stop.
 */
async function membershipPorts(
  frontendPort: number,
  portsFile: string | undefined,
  keepFree: readonly number[],
): Promise<MembershipPorts> {
  if (portsFile) {
    const last = await lastMembershipPorts(portsFile, frontendPort, keepFree);
    if (last) return last;
  }
  const taken = new Set<number>([frontendPort, ...keepFree]);
  const start = 10_000 + Math.floor(Math.random() * 20_000);
  const chosen = {} as MembershipPorts;
  for (const service of TEMPORAL_SERVICES) {
    chosen[service] = await choosePort(start, taken, MAX_MEMBERSHIP_PORT);
    taken.add(chosen[service]);
  }
  if (portsFile) await writeFile(portsFile, `${JSON.stringify(chosen)}\n`, { mode: 0o600 });
  return chosen;
}

/** The ports `portsFile` recorded, when each is still usable and free. */
async function lastMembershipPorts(
  portsFile: string,
  frontendPort: number,
  keepFree: readonly number[],
): Promise<MembershipPorts | undefined> {
  const last = await readFile(portsFile, 'utf8').then(
    (text) => JSON.parse(text) as Partial<Record<TemporalService, unknown>>,
    () => undefined,
  );
  const ports = TEMPORAL_SERVICES.map((service) => last?.[service]);
  const usable = (port: unknown): port is number =>
    Number.isInteger(port) && (port as number) > 0 && (port as number) <= MAX_MEMBERSHIP_PORT;
  const free =
    last !== undefined &&
    ports.every(usable) &&
    new Set([...ports, frontendPort]).size === ports.length + 1 &&
    !ports.some((port) => keepFree.includes(port as number)) &&
    (await Promise.all(ports.map((port) => canBind(port)))).every(Boolean);
  return free ? (last as MembershipPorts) : undefined;
}

/**
 * The built-in config template's port variables: the frontend on `frontendPort`, the rest free
 * ports, none of them one of `keepFree` (ports others will bind, such as the port the server is to
 * answer on once a first start has prepared its data file) nor each other.
 */
export async function servicePorts(
  frontendPort: number,
  portsFile: string | undefined,
  keepFree: readonly number[] = [],
): Promise<Record<string, string>> {
  const membership = await membershipPorts(frontendPort, portsFile, keepFree);
  const taken = [frontendPort, ...keepFree, ...Object.values(membership)];
  const anotherFreePort = async () => {
    const port = await freePortExcept(taken);
    taken.push(port);
    return String(port);
  };
  return {
    FRONTEND_GRPC_PORT: String(frontendPort),
    FRONTEND_HTTP_PORT: await anotherFreePort(),
    FRONTEND_MEMBERSHIP_PORT: String(membership.frontend),
    HISTORY_GRPC_PORT: await anotherFreePort(),
    HISTORY_MEMBERSHIP_PORT: String(membership.history),
    MATCHING_GRPC_PORT: await anotherFreePort(),
    MATCHING_MEMBERSHIP_PORT: String(membership.matching),
    WORKER_GRPC_PORT: await anotherFreePort(),
    WORKER_MEMBERSHIP_PORT: String(membership.worker),
  };
}
