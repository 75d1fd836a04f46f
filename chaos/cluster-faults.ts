/**
 * The Temporal cluster of `npm run chaos -- --cluster` (`durable-agent cluster`: PostgreSQL and
 * Temporal's frontend, history, matching and worker services, each a process of its own) and the
 * faults the run injects in it: a service SIGKILLed, PostgreSQL stopped with `pg_ctl stop -m
 * immediate` (no checkpoint, open connections cut, as a crash would). What was faulted is brought
 * back as an operator would: `startCluster` again, which starts only what is down.
 */
import path from 'node:path';
import { startCluster } from '../src/temporal-server/cluster/cluster';
import { type ClusterFiles, clusterFiles } from '../src/temporal-server/cluster/cluster-files';
import { gone } from '../src/temporal-server/cluster/cluster-processes';
import { readClusterState } from '../src/temporal-server/cluster/cluster-state';
import {
  POSTGRES_MISSING,
  PostgresCluster,
  findPostgresBin,
  runningPostgres,
} from '../src/temporal-server/cluster/postgres-cluster';
import { postgresUser } from '../src/temporal-server/cluster/postgres-user';
import {
  TEMPORAL_SERVICES,
  type TemporalService,
  serviceRunning,
} from '../src/temporal-server/cluster/temporal-services';

export const CLUSTER_FAULT_KINDS = ['history', 'matching', 'frontend', 'postgres'] as const;
export type ClusterFaultKind = (typeof CLUSTER_FAULT_KINDS)[number];

/** How a fault is told in the results. */
export const FAULT_LABEL: Record<ClusterFaultKind, string> = {
  history: 'history service SIGKILLed',
  matching: 'matching service SIGKILLed',
  frontend: 'frontend SIGKILLed',
  postgres: 'PostgreSQL stopped with -m immediate',
};

/** `count` faults: every kind once in a random order (as far as `count` goes), then kinds at random. */
export function planClusterFaults(count: number, random: () => number): ClusterFaultKind[] {
  const kinds: ClusterFaultKind[] = [...CLUSTER_FAULT_KINDS];
  for (let at = kinds.length - 1; at > 0; at--) {
    const other = Math.floor(random() * (at + 1));
    [kinds[at], kinds[other]] = [kinds[other]!, kinds[at]!];
  }
  const plan = kinds.slice(0, count);
  while (plan.length < count)
    plan.push(CLUSTER_FAULT_KINDS[Math.floor(random() * CLUSTER_FAULT_KINDS.length)]!);
  return plan;
}

export interface ChaosCluster {
  dir: string;
  /** The frontend's address; it keeps its port across restarts. */
  address: string;
  /** Injects the fault and resolves once the faulted process is gone. */
  fault(kind: ClusterFaultKind): Promise<void>;
  /**
   * `startCluster` again, until the frontend serves; returns the processes it found down (the
   * faulted one, and any that died of it). A start that fails is tried again, up to three times.
   */
  restore(): Promise<string[]>;
  /** The processes of the cluster that are not running. */
  down(): Promise<string[]>;
}

/** Starts a cluster in `dir` (all of it the first time) with its frontend on `port`. */
export async function startChaosCluster(options: {
  dir: string;
  port: number;
  log: (line: string) => void;
}): Promise<ChaosCluster> {
  const { dir, log } = options;
  const env = process.env;
  const files = clusterFiles(path.resolve(dir));
  const postgresBin = findPostgresBin(env);
  if (!postgresBin) throw new Error(POSTGRES_MISSING);
  const postgres = () => new PostgresCluster(files, postgresBin, postgresUser(files.dir, log), log);
  const down = async () => processesDown(files);
  const address = await startCluster({ dir, env, log, port: options.port });
  return {
    dir,
    address,
    down,
    async fault(kind) {
      if (kind === 'postgres') return postgres().stop('immediate');
      const pid = (await readClusterState(files.state))?.services[kind].pid;
      if (pid === undefined || !serviceRunning(files, kind, pid))
        throw new Error(`the ${kind} service is not running`);
      process.kill(pid, 'SIGKILL');
      if (!(await gone(() => serviceRunning(files, kind, pid), 10_000))) {
        throw new Error(`the ${kind} service (pid ${pid}) outlived SIGKILL`);
      }
    },
    async restore() {
      const found = await down();
      for (let attempt = 1; ; attempt++) {
        try {
          await startCluster({ dir, env, log });
          return found;
        } catch (error) {
          if (attempt >= 3) throw error;
          log(`the cluster did not start again (${(error as Error).message}); trying again`);
          for (const name of await down()) if (!found.includes(name)) found.push(name);
        }
      }
    },
  };
}

async function processesDown(files: ClusterFiles): Promise<string[]> {
  const state = await readClusterState(files.state);
  const services = TEMPORAL_SERVICES.filter(
    (service: TemporalService) => !serviceRunning(files, service, state?.services[service].pid),
  );
  return [...(runningPostgres(files) ? [] : ['postgres']), ...services];
}
