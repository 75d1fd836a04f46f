import { spawnSync } from 'node:child_process';
import { accessSync, constants, lstatSync, readlinkSync } from 'node:fs';

/** What `sandbox` mode lets a command have; set by whoever runs the worker. */
export interface SandboxSettings {
  /** Reach the network (AGENT_EXEC_SANDBOX_NETWORK=1). Default false: a network namespace of its own, loopback only. */
  network: boolean;
  /** Address space per process, MiB (AGENT_EXEC_SANDBOX_MEMORY_MB). */
  memoryMb: number;
  /** CPU seconds per process (AGENT_EXEC_SANDBOX_CPU_S). */
  cpuSeconds: number;
  /**
   * Tasks (processes and threads) per command (AGENT_EXEC_SANDBOX_PROCESSES): `pids.max` of the
   * command's cgroup, which binds root too; also `ulimit -u`, which counts all of the worker user's
   * processes and does not bind root.
   */
  processes: number;
  /** Largest file a command may write, MiB (AGENT_EXEC_SANDBOX_FILE_MB). */
  fileMb: number;
  /** Size of the private /tmp, MiB (AGENT_EXEC_SANDBOX_TMP_MB); it is memory, so it is kept small. */
  tmpMb: number;
}

export const DEFAULT_SANDBOX_SETTINGS: SandboxSettings = {
  network: false,
  memoryMb: 4_096,
  cpuSeconds: 600,
  processes: 256,
  fileMb: 1_024,
  tmpMb: 512,
};

/** How the host lays out its system directories: real ones are bound read-only, links recreated. */
export type HostLayout = ReadonlyArray<{ path: string; link?: string }>;

const SYSTEM_DIRECTORIES = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64'];
/**
 * The parts of /etc programs need to start and resolve names; not the rest, which holds host
 * secrets (shadow, private keys) that root inside the sandbox could read.
 */
const ETC_FILES = [
  '/etc/alternatives',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/passwd',
  '/etc/group',
  '/etc/nsswitch.conf',
  '/etc/hosts',
  '/etc/resolv.conf',
  '/etc/localtime',
  '/etc/timezone',
  '/etc/ssl/certs',
  '/etc/ca-certificates',
  '/etc/mime.types',
  '/etc/os-release',
];

/**
 * The bubblewrap command line that runs `command` with bash inside a sandbox: the system's program
 * directories and a few /etc files read-only, the workspace the only writable place (at its own
 * path, also the home directory), a private /tmp of `tmpMb`, /proc and /dev of its own, no other host file,
 * process, IPC or (unless allowed) network, every capability dropped, exactly `env`, and the
 * resource limits set before the command starts. The command is passed as an argument, never
 * spliced into a script. The sandbox dies with the process that started it.
 */
export function bubblewrapArgv(
  command: string,
  options: {
    workspace: string;
    env: Readonly<Record<string, string>>;
    settings: SandboxSettings;
    layout: HostLayout;
  },
): string[] {
  const { workspace, env, settings, layout } = options;
  const argv = [bubblewrapExecutable(), '--die-with-parent', '--new-session', '--unshare-all'];
  if (settings.network) argv.push('--share-net');
  for (const entry of layout) {
    if (entry.link !== undefined) argv.push('--symlink', entry.link, entry.path);
    else argv.push('--ro-bind', entry.path, entry.path);
  }
  for (const file of ETC_FILES) argv.push('--ro-bind-try', file, file);
  // `--size` (bubblewrap 0.8) bounds the tmpfs that follows; without it /tmp could take half the host's memory.
  argv.push(
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--size',
    String(settings.tmpMb * 1024 * 1024),
    '--tmpfs',
    '/tmp',
  );
  argv.push('--bind', workspace, workspace, '--chdir', workspace, '--cap-drop', 'ALL', '--clearenv');
  for (const [name, value] of Object.entries({ ...env, HOME: workspace, TMPDIR: '/tmp' })) {
    argv.push('--setenv', name, value);
  }
  const limits = [
    String(settings.memoryMb * 1024),
    String(settings.cpuSeconds),
    String(settings.processes),
    // ulimit -f counts 1 KiB blocks in bash.
    String(settings.fileMb * 1024),
  ];
  argv.push(
    '--',
    'bash',
    '--norc',
    '--noprofile',
    '-c',
    'ulimit -v "$1" -t "$2" -u "$3" -f "$4" && exec bash --norc --noprofile -c "$5"',
    'sandbox',
    ...limits,
    command,
  );
  return argv;
}

/** This machine's system directories: which exist, and which are links (merged /usr). */
export function hostLayout(): HostLayout {
  return SYSTEM_DIRECTORIES.flatMap((path) => {
    try {
      const info = lstatSync(path);
      if (info.isSymbolicLink()) return [{ path, link: readlinkSync(path) }];
      return info.isDirectory() ? [{ path }] : [];
    } catch {
      return [];
    }
  });
}

let usable: { ok: true } | { ok: false; reason: string } | undefined;
let executable: string | undefined;

/**
 * The bwrap every sandbox runs, found once on the worker's PATH (then the system's directories), so
 * the one whose availability is checked is the one commands get, whatever PATH their environment has.
 */
export function bubblewrapExecutable(): string {
  executable ??=
    [...(process.env.PATH ?? '').split(':'), '/usr/bin', '/bin']
      .filter((directory) => directory.startsWith('/'))
      .map((directory) => `${directory}/bwrap`)
      .find((candidate) => {
        try {
          accessSync(candidate, constants.X_OK);
          return true;
        } catch {
          return false;
        }
      }) ?? 'bwrap';
  return executable;
}

/**
 * Whether bubblewrap is installed and can create its namespaces here, tried once with the same
 * flags commands get. The reason says what to do when it cannot.
 */
export function sandboxAvailability(): { ok: true } | { ok: false; reason: string } {
  if (usable) return usable;
  const argv = bubblewrapArgv('true', {
    workspace: '/tmp',
    env: { PATH: '/usr/bin:/bin' },
    settings: DEFAULT_SANDBOX_SETTINGS,
    layout: hostLayout(),
  });
  const result = spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8', timeout: 10_000, env: {} });
  if ((result.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') {
    usable = { ok: false, reason: 'bubblewrap (bwrap) is not installed: apt-get install bubblewrap' };
  } else if (result.status !== 0 && /--size/.test(result.stderr ?? '')) {
    usable = {
      ok: false,
      reason: `this bubblewrap cannot bound the sandbox's /tmp (${result.stderr.trim()}); bubblewrap 0.8.0 or later is needed`,
    };
  } else if (result.status !== 0) {
    usable = {
      ok: false,
      reason: `bubblewrap cannot create its sandbox here (${(result.stderr || result.error?.message || `exit ${result.status}`).trim()}); user namespaces may be disabled`,
    };
  } else usable = { ok: true };
  return usable;
}
