import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { load } from 'js-yaml';
import { PACKAGE_ROOT } from '../../src/platform/paths';
import { NAMESPACE } from '../../src/temporal-server/cluster/cluster';
import {
  DYNAMIC_CONFIG_FILE,
  SCHEMA_SCRIPT,
  SERVER_SETTINGS_FILE,
  serviceEnvironment,
} from '../../src/temporal-server/cluster/cluster-config';
import { NAMESPACE_RETENTION } from '../../src/temporal-server/cluster/cluster-frontend';
import type { ClusterState } from '../../src/temporal-server/cluster/cluster-state';
import { POSTGRES_MISSING, findPostgresBin } from '../../src/temporal-server/cluster/postgres-cluster';
import { TEMPORAL_SERVICES } from '../../src/temporal-server/cluster/temporal-services';
import { DEV_SERVER_DYNAMIC_CONFIG } from '../../src/temporal-server/dev-server';
import { inCi } from '../support/in-ci';

/**
 * docker-compose.yml and `durable-agent cluster` run the same cluster: the same server version, the
 * same settings file and dynamic config, the same schema script, the same namespace. Read from both,
 * so a change to one that the other misses fails here.
 */

interface ComposeService {
  image?: string;
  env_file?: string;
  environment?: Record<string, string>;
  volumes?: string[];
  entrypoint?: string[];
}

const compose = load(readFileSync(path.join(PACKAGE_ROOT, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, ComposeService>;
};
const service = (name: string) => {
  const found = compose.services[name];
  if (!found) throw new Error(`docker-compose.yml has no service ${name}`);
  return found;
};
const buildScript = readFileSync(path.join(PACKAGE_ROOT, 'scripts', 'build-temporal-server.mjs'), 'utf8');
const serverVersion = /TEMPORAL_SERVER_VERSION = '([^']+)'/.exec(buildScript)?.[1];
const fromRoot = (file: string) => `./${path.relative(PACKAGE_ROOT, file)}`;
/** What each deployment says for itself: which service, where the database and files are, credentials. */
const WHERE_THINGS_ARE = new Set([
  'TEMPORAL_SERVICES',
  'POSTGRES_SEEDS',
  'DB_PORT',
  'POSTGRES_USER',
  'POSTGRES_PWD',
  'BIND_ON_IP',
  'DYNAMIC_CONFIG_FILE_PATH',
]);

/** The cluster's environment for a service, with made-up ports: only its keys and fixed values count. */
const clusterEnvironment = serviceEnvironment(
  {
    version: 1,
    postgresPort: 5433,
    frontendHttpPort: 7243,
    services: {
      frontend: { grpcPort: 7233, membershipPort: 6933 },
      history: { grpcPort: 7234, membershipPort: 6934 },
      matching: { grpcPort: 7235, membershipPort: 6935 },
      worker: { grpcPort: 7239, membershipPort: 6939 },
    },
  } satisfies ClusterState,
  'secret',
);

test('each of the four Temporal services runs the version the cluster builds, in a container of its own', () => {
  expect(serverVersion).toMatch(/^\d+\.\d+\.\d+$/);
  for (const name of TEMPORAL_SERVICES) {
    const server = service(`temporal-${name}`);
    expect(server.image).toBe(`temporalio/server:${serverVersion}`);
    expect(server.environment?.TEMPORAL_SERVICES).toBe(name);
  }
  expect(service('temporal-schema').image).toBe(`temporalio/admin-tools:${serverVersion}`);
  expect(service('temporal-namespace').image).toBe(`temporalio/admin-tools:${serverVersion}`);
});

test('the services read the same settings file, and set nothing the cluster does not set too', () => {
  for (const name of TEMPORAL_SERVICES) {
    const server = service(`temporal-${name}`);
    expect(server.env_file).toBe(fromRoot(SERVER_SETTINGS_FILE));
    const composeOnly = Object.keys(server.environment ?? {}).filter(
      (key) => key !== 'TEMPORAL_SERVICES' && !(key in clusterEnvironment),
    );
    expect(composeOnly).toEqual([]);
    // Where the two differ, it is only in where things are: the database, credentials, addresses.
    const fixed = Object.entries(server.environment ?? {}).filter(([key]) => !WHERE_THINGS_ARE.has(key));
    for (const [key, value] of fixed) expect([key, clusterEnvironment[key]]).toEqual([key, value]);
  }
  // Nothing of the settings file is overridden by the cluster.
  const settings = readFileSync(SERVER_SETTINGS_FILE, 'utf8');
  for (const line of settings.split('\n').filter((text) => /^[A-Z]/.test(text))) {
    const [key, value] = line.split('=') as [string, string];
    expect([key, clusterEnvironment[key]]).toEqual([key, value]);
  }
});

test('the same dynamic config, with the values the embedded Temporal server runs with', () => {
  const mountedAt = '/etc/temporal/config/dynamicconfig';
  for (const name of TEMPORAL_SERVICES) {
    const server = service(`temporal-${name}`);
    expect(server.volumes).toContain(`${fromRoot(path.dirname(DYNAMIC_CONFIG_FILE))}:${mountedAt}:ro`);
    expect(server.environment?.DYNAMIC_CONFIG_FILE_PATH).toBe(
      `${mountedAt}/${path.basename(DYNAMIC_CONFIG_FILE)}`,
    );
  }
  expect(clusterEnvironment.DYNAMIC_CONFIG_FILE_PATH).toBe(DYNAMIC_CONFIG_FILE);
  const dynamicConfig = load(readFileSync(DYNAMIC_CONFIG_FILE, 'utf8')) as Record<
    string,
    Array<{ value: unknown }>
  >;
  expect(
    Object.fromEntries(Object.entries(dynamicConfig).map(([key, [setting]]) => [key, setting?.value])),
  ).toEqual(DEV_SERVER_DYNAMIC_CONFIG);
});

test('the same schema script and namespace', () => {
  const schema = service('temporal-schema');
  expect(schema.volumes).toContain(`${fromRoot(path.dirname(SCHEMA_SCRIPT))}:/deploy:ro`);
  expect(schema.entrypoint).toEqual(['/bin/sh', `/deploy/${path.basename(SCHEMA_SCRIPT)}`]);
  expect(schema.env_file).toBe(fromRoot(SERVER_SETTINGS_FILE));
  const namespace = (service('temporal-namespace').entrypoint ?? []).join(' ');
  expect(namespace).toContain(
    `temporal operator namespace create --namespace ${NAMESPACE} --retention ${NAMESPACE_RETENTION} `,
  );
});

test("compose's PostgreSQL is the major version the cluster runs on here", () => {
  const image = service('postgresql').image ?? '';
  const composeMajor = /^postgres:(\d+)/.exec(image)?.[1];
  expect(composeMajor).toBeDefined();
  const bin = findPostgresBin();
  if (!bin) {
    const why = `no PostgreSQL here (${POSTGRES_MISSING})`;
    if (inCi()) throw new Error(`${why}: CI must compare compose's version with the one the cluster runs on`);
    console.warn(`${why}: compose's version is not compared with one`);
    return;
  }
  const version = execFileSync(path.join(bin, 'postgres'), ['--version'], { encoding: 'utf8' });
  expect(/\(PostgreSQL\) (\d+)/.exec(version)?.[1]).toBe(composeMajor);
});
