import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/** Who runs PostgreSQL when this process is root, which PostgreSQL refuses to run as. */
export const POSTGRES_USER = 'durable-agent';

/** CAP_DAC_READ_SEARCH, by its number in Linux's capability sets. */
const CAP_DAC_READ_SEARCH = 2;

export interface PostgresUser {
  /** Another user's ids when this process is root; undefined: PostgreSQL runs as this user. */
  other?: { name: string; uid: number; gid: number };
  /** `program args` as the command that runs it as that user. */
  command(program: string, args: readonly string[]): { file: string; args: string[] };
}

/**
 * This process's own user, or when it is root the POSTGRES_USER system user (created when
 * missing), through `setpriv`. That user must pass through every directory above `clusterDir`: when
 * one is closed to it (root's home is), PostgreSQL gets CAP_DAC_READ_SEARCH, which lets it pass
 * and read, but not write, where its own permissions would not.
 */
export function postgresUser(clusterDir: string, log: (line: string) => void): PostgresUser {
  if (process.getuid?.() !== 0) return { command: (file, args) => ({ file, args: [...args] }) };
  const setpriv = onPath('setpriv');
  if (!setpriv) {
    throw new Error(
      'PostgreSQL refuses to run as root and setpriv, which would run it as another user, is missing ' +
        '(Debian: apt-get install util-linux); or run durable-agent cluster as a user other than root',
    );
  }
  const user = systemUser(POSTGRES_USER, log);
  const closed = closedAncestor(path.dirname(path.resolve(clusterDir)), user);
  if (closed && !boundingCapabilities().has(CAP_DAC_READ_SEARCH)) {
    throw new Error(
      `PostgreSQL runs as user ${POSTGRES_USER}, which may not enter ${closed}, above ${clusterDir}; ` +
        'choose a --dir it can reach, such as /var/lib/durable-agent/cluster',
    );
  }
  const identity = [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups'];
  const lend = closed ? ['--inh-caps=+dac_read_search', '--ambient-caps=+dac_read_search'] : [];
  return {
    other: user,
    command: (file, args) => ({ file: setpriv, args: [...identity, ...lend, '--', file, ...args] }),
  };
}

function systemUser(name: string, log: (line: string) => void): { name: string; uid: number; gid: number } {
  const existing = lookUpUser(name);
  if (existing) return existing;
  const useradd = onPath('useradd');
  if (!useradd) {
    throw new Error(
      `PostgreSQL refuses to run as root, and user ${name} to run it as is missing, as is useradd to create ` +
        `it: create a system user ${name}, or run durable-agent cluster as a user other than root`,
    );
  }
  log(`Creating system user ${name} to run PostgreSQL, which refuses to run as root.`);
  const created = spawnSync(
    useradd,
    [
      '--system',
      '--user-group',
      '--no-create-home',
      '--home-dir',
      '/nonexistent',
      '--shell',
      '/usr/sbin/nologin',
      name,
    ],
    { encoding: 'utf8' },
  );
  const user = lookUpUser(name);
  if (!user) throw new Error(`useradd could not create user ${name}: ${created.stderr || created.error}`);
  return user;
}

function lookUpUser(name: string): { name: string; uid: number; gid: number } | undefined {
  const result = spawnSync('getent', ['passwd', name], { encoding: 'utf8' });
  const fields = result.status === 0 ? result.stdout.trim().split(':') : [];
  const [uid, gid] = [Number(fields[2]), Number(fields[3])];
  return fields.length >= 4 && Number.isInteger(uid) && Number.isInteger(gid)
    ? { name, uid, gid }
    : undefined;
}

/** The first directory from / down to `directory` that `user` may not pass through (by mode bits). */
function closedAncestor(directory: string, user: { uid: number; gid: number }): string | undefined {
  const parts = directory.split(path.sep).filter(Boolean);
  for (let depth = 0; depth <= parts.length; depth++) {
    const ancestor = path.sep + parts.slice(0, depth).join(path.sep);
    let info;
    try {
      info = statSync(ancestor);
    } catch {
      // The caller creates the cluster directory first: one missing is no way through.
      return ancestor;
    }
    const bit = info.uid === user.uid ? 0o100 : info.gid === user.gid ? 0o010 : 0o001;
    if ((info.mode & bit) === 0) return ancestor;
  }
  return undefined;
}

function boundingCapabilities(): Set<number> {
  const status = readFileSync('/proc/self/status', 'utf8');
  const hex = /^CapBnd:\s*([0-9a-f]+)$/m.exec(status)?.[1] ?? '0';
  const bits = BigInt(`0x${hex}`);
  const held = new Set<number>();
  for (let cap = 0; cap < 64; cap++) if ((bits >> BigInt(cap)) & 1n) held.add(cap);
  return held;
}

/** `command` on this process's PATH, or /usr/sbin and /sbin where root's tools live. */
function onPath(command: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), '/usr/sbin', '/sbin'];
  for (const dir of dirs) {
    const candidate = path.join(dir, command);
    try {
      if (statSync(candidate).mode & 0o111) return candidate;
    } catch {
      // Not in this directory.
    }
  }
  return undefined;
}
