import path from 'node:path';
import { dataDir } from '../../platform/paths';
import type { TemporalService } from './temporal-services';

/** Where a cluster keeps everything: one directory, DIR in `durable-agent cluster --dir DIR`. */
export interface ClusterFiles {
  dir: string;
  /** Ports and process ids (cluster-state.ts). */
  state: string;
  /** Held by a `start` or `stop` in progress. */
  lock: string;
  /** PostgreSQL's data directory, owned by the user that runs PostgreSQL. */
  postgresData: string;
  /** The database password, readable by this user only. */
  postgresPassword: string;
  logs: string;
  logOf(process: TemporalService | 'postgres'): string;
}

export function clusterFiles(dir: string): ClusterFiles {
  const logs = path.join(dir, 'logs');
  return {
    dir,
    state: path.join(dir, 'cluster.json'),
    lock: path.join(dir, 'cluster.lock'),
    postgresData: path.join(dir, 'postgres'),
    postgresPassword: path.join(dir, 'postgres-password'),
    logs,
    logOf: (process) => path.join(logs, `${process}.log`),
  };
}

/** `<data dir>/cluster`, where `durable-agent cluster` keeps its cluster without --dir. */
export function defaultClusterDir(env: NodeJS.ProcessEnv): string {
  return path.join(dataDir(env), 'cluster');
}
