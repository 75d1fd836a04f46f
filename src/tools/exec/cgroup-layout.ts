import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Where this process sits in the cgroup hierarchies that matter to commands: the unified (v2)
 * hierarchy, and the v1 hierarchy that carries the pids controller. Each is the directory of this
 * process's own cgroup, as mounted here. Read from /proc/self/mountinfo and /proc/self/cgroup, so
 * a container's cgroup namespace, a hybrid layout or a cgroup fs mounted elsewhere are all found.
 */
export interface CgroupLayout {
  /** This process's cgroup in the v2 hierarchy, if one is mounted. */
  v2?: string;
  /** This process's cgroup in the v1 hierarchy holding the pids controller, if one is mounted. */
  v1Pids?: string;
}

interface Mount {
  root: string;
  mountPoint: string;
  fsType: string;
  superOptions: string[];
}

/** The cgroup mounts of a /proc/<pid>/mountinfo text. */
export function cgroupMounts(mountinfo: string): Mount[] {
  const mounts: Mount[] = [];
  for (const line of mountinfo.split('\n')) {
    // id parent major:minor root mount-point options [optional fields…] - fstype source super-options
    const [before, after] = line.split(' - ');
    if (before === undefined || after === undefined) continue;
    const fields = before.split(' ');
    const [fsType, , superOptions = ''] = after.split(' ');
    if (fsType !== 'cgroup' && fsType !== 'cgroup2') continue;
    if (fields[3] === undefined || fields[4] === undefined) continue;
    mounts.push({
      root: unescape(fields[3]),
      mountPoint: unescape(fields[4]),
      fsType,
      superOptions: superOptions.split(','),
    });
  }
  return mounts;
}

/** The layout from the texts of /proc/self/mountinfo and /proc/self/cgroup; pure. */
export function cgroupLayoutOf(mountinfo: string, procCgroup: string): CgroupLayout {
  const mounts = cgroupMounts(mountinfo);
  const layout: CgroupLayout = {};
  for (const line of procCgroup.split('\n')) {
    // hierarchy-id:controllers:path; v2 is `0::path`.
    const match = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (!match) continue;
    const [, id, controllers, cgroupPath] = match as unknown as [string, string, string, string];
    if (id === '0' && controllers === '') {
      for (const mount of mounts.filter((candidate) => candidate.fsType === 'cgroup2')) {
        const own = within(mount, cgroupPath);
        if (own !== undefined) layout.v2 ??= own;
      }
    } else if (controllers.split(',').includes('pids')) {
      for (const mount of mounts) {
        if (mount.fsType !== 'cgroup' || !mount.superOptions.includes('pids')) continue;
        layout.v1Pids ??= within(mount, cgroupPath);
      }
    }
  }
  return layout;
}

/** This process's layout, read from /proc; empty where there is no /proc or no cgroup fs. */
export function readCgroupLayout(): CgroupLayout {
  try {
    return cgroupLayoutOf(
      readFileSync('/proc/self/mountinfo', 'utf8'),
      readFileSync('/proc/self/cgroup', 'utf8'),
    );
  } catch {
    return {};
  }
}

/**
 * The directory of cgroup `cgroupPath` under `mount`, when the mount shows it: the path must lie
 * within the mount's root. A path outside this cgroup namespace (`/../x`) is not reachable.
 */
function within(mount: Mount, cgroupPath: string): string | undefined {
  if (!cgroupPath.startsWith('/') || cgroupPath.split('/').includes('..')) return undefined;
  const root = mount.root.endsWith('/') ? mount.root : `${mount.root}/`;
  if (cgroupPath !== mount.root && !cgroupPath.startsWith(root)) return undefined;
  return path.join(mount.mountPoint, cgroupPath.slice(mount.root.length));
}

/** mountinfo writes space, tab, newline and backslash as octal escapes. */
const unescape = (field: string) =>
  field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
