import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { accessSync, chownSync, constants, existsSync, readFileSync, readdirSync } from 'node:fs';
import { appendFile, mkdir, open, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { childEnvironment } from '../../tools/exec/child-environment';
import type { ClusterFiles } from './cluster-files';
import { gone, logTail, runningAs } from './cluster-processes';
import type { PostgresUser } from './postgres-user';

/** The database role Temporal connects as: the cluster's superuser, with a generated password. */
export const DATABASE_ROLE = 'temporal';

const POSTGRES_PROGRAMS = ['initdb', 'pg_ctl', 'postgres'] as const;

export const POSTGRES_MISSING =
  "PostgreSQL's server programs (initdb, pg_ctl, postgres) are not installed, neither in " +
  '/usr/lib/postgresql/*/bin nor on PATH: apt-get install postgresql (Debian, Ubuntu), then try again';

/**
 * The directory of PostgreSQL's server programs: `pg_config --bindir`, else the newest
 * /usr/lib/postgresql/<version>/bin (Debian installs them there, off PATH), else PATH.
 * Undefined when there is none.
 */
export function findPostgresBin(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates: string[] = [];
  const pgConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8', env: childEnvironment(env) });
  if (pgConfig.status === 0) candidates.push(pgConfig.stdout.trim());
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((version) => path.join(debian, version, 'bin')));
  }
  candidates.push(...(env.PATH ?? '').split(path.delimiter).filter(Boolean));
  return candidates.find((dir) =>
    POSTGRES_PROGRAMS.every((program) => isExecutable(path.join(dir, program))),
  );
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The postmaster's pid and port while it runs (as postmaster.pid says, and the process confirms). */
export function runningPostgres(files: ClusterFiles): { pid: number; port: number } | undefined {
  let lines: string[];
  try {
    lines = readFileSync(path.join(files.postgresData, 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return undefined;
  }
  // postmaster.pid: the pid on line 1, the port on line 4.
  const [pid, port] = [Number(lines[0]), Number(lines[3])];
  return Number.isInteger(pid) && runningAs(pid, [files.postgresData]) ? { pid, port } : undefined;
}

/** The cluster's own PostgreSQL: a database cluster in DIR/postgres, on 127.0.0.1 only. */
export class PostgresCluster {
  constructor(
    private readonly files: ClusterFiles,
    private readonly bin: string,
    private readonly user: PostgresUser,
    private readonly log: (line: string) => void,
  ) {}

  pid(): number | undefined {
    return runningPostgres(this.files)?.pid;
  }

  /** The password of DATABASE_ROLE. */
  password(): string {
    try {
      return readFileSync(this.files.postgresPassword, 'utf8').trim();
    } catch (error) {
      throw new Error(
        `cannot read the database password, ${this.files.postgresPassword} (${(error as Error).message}); ` +
          `without it ${this.files.postgresData} cannot be used: remove the cluster directory to start afresh`,
      );
    }
  }

  /** Creates the database cluster with `initdb` unless there is one. */
  async ensureInitialized(): Promise<void> {
    const data = this.files.postgresData;
    if (existsSync(path.join(data, 'PG_VERSION'))) return;
    if (existsSync(data)) {
      throw new Error(
        `${data} exists but holds no PostgreSQL database cluster: remove it to have one created`,
      );
    }
    this.log(`Creating a PostgreSQL database cluster in ${data}.`);
    // Made in a scratch directory and renamed whole: an interrupted initdb leaves nothing `start` would use.
    const scratch = `${data}.initdb`;
    const scratchData = path.join(scratch, 'data');
    const passwordFile = path.join(scratch, 'password');
    await rm(scratch, { recursive: true, force: true });
    await mkdir(scratchData, { recursive: true, mode: 0o700 });
    const password = randomBytes(24).toString('base64url');
    await writeFile(this.files.postgresPassword, `${password}\n`, { mode: 0o600 });
    // initdb reads the password from a file only it (and this user) may read, gone right after.
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
    for (const file of [scratch, scratchData, passwordFile]) this.giveToUser(file);
    try {
      await this.run('initdb', [
        '--pgdata',
        scratchData,
        `--username=${DATABASE_ROLE}`,
        '--auth=scram-sha-256',
        `--pwfile=${passwordFile}`,
        '--encoding=UTF8',
        '--locale=C',
      ]);
      await appendFile(
        path.join(scratchData, 'postgresql.conf'),
        [
          '',
          '# durable-agent cluster: TCP on the loopback address only (the port is given at start), no Unix',
          '# socket; four Temporal services with a connection pool each.',
          "listen_addresses = '127.0.0.1'",
          "unix_socket_directories = ''",
          'max_connections = 200',
          '',
        ].join('\n'),
      );
      await rename(scratchData, data);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  /** Starts PostgreSQL on `port` and waits until it accepts connections. */
  async start(port: number): Promise<void> {
    const logFile = this.files.logOf('postgres');
    await (await open(logFile, 'a', 0o600)).close();
    this.giveToUser(logFile);
    try {
      await this.run('pg_ctl', [
        'start',
        '--pgdata',
        this.files.postgresData,
        '--log',
        logFile,
        '--wait',
        '--timeout=120',
        '--silent',
        '-o',
        `-p ${port}`,
      ]);
    } catch (error) {
      throw new Error(`PostgreSQL did not start: ${(error as Error).message}\n${await logTail(logFile)}`);
    }
    if (this.pid() === undefined) {
      throw new Error(`PostgreSQL started but left no postmaster.pid\n${await logTail(logFile)}`);
    }
  }

  /**
   * Stops PostgreSQL and waits until it is gone: `fast` (`pg_ctl stop -m fast`, the default) ends
   * open connections and writes a checkpoint; `immediate` quits at once, as a crash would (the chaos
   * run's fault), and the next start recovers from the write-ahead log.
   */
  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    const pid = this.pid();
    if (pid === undefined) return;
    await this.run('pg_ctl', [
      'stop',
      '--pgdata',
      this.files.postgresData,
      `--mode=${mode}`,
      '--wait',
      '--silent',
    ]);
    if (!(await gone(() => runningAs(pid, [this.files.postgresData]), 30_000))) {
      throw new Error(`PostgreSQL (pid ${pid}) is still running after pg_ctl stop`);
    }
  }

  /** Hands a file or directory PostgreSQL writes to the user that runs it. */
  private giveToUser(file: string): void {
    const other = this.user.other;
    if (other) chownSync(file, other.uid, other.gid);
  }

  private run(program: string, args: string[]): Promise<void> {
    const command = this.user.command(path.join(this.bin, program), args);
    return new Promise((resolve, reject) => {
      const child = spawn(command.file, command.args, {
        // PostgreSQL needs nothing of this process's settings or secrets; PG* ones would change it.
        env: childEnvironment(process.env),
        // pg_ctl's server keeps stdout and stderr open: ignored, they cannot hold this process up.
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr = (stderr + chunk.toString()).slice(-4_000);
      });
      child.on('error', reject);
      child.on('close', (code) =>
        code === 0 ? resolve() : reject(new Error(`${program} exited with ${code}: ${stderr.trim()}`)),
      );
    });
  }
}
