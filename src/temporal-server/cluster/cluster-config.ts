import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../../platform/paths';
import { type ClusterState, serviceHost } from './cluster-state';
import { DATABASE_ROLE } from './postgres-cluster';

/**
 * Temporal's settings shared with docker-compose.yml: the server reads them through its built-in
 * configuration template (`temporal-server start` with no config file, as the temporalio/server
 * image runs it). Each deployment adds only where things are.
 */
export const SERVER_SETTINGS_FILE = path.join(PACKAGE_ROOT, 'deploy', 'temporal', 'server.env');
/** The server's dynamic config, mounted by docker-compose.yml too. */
export const DYNAMIC_CONFIG_FILE = path.join(PACKAGE_ROOT, 'deploy', 'dynamicconfig', 'durable-agent.yaml');
/** Creates the databases if missing and brings their schema up; compose runs it in admin-tools. */
export const SCHEMA_SCRIPT = path.join(PACKAGE_ROOT, 'deploy', 'temporal', 'setup-schema.sh');

/** `KEY=VALUE` lines of an env file; `#` comments and blank lines skipped. Throws on anything else. */
export function parseEnvFile(text: string, file: string): Record<string, string> {
  const settings: Record<string, string> = {};
  text.split('\n').forEach((line, index) => {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(trimmed);
    if (!match) throw new Error(`${file}:${index + 1}: not a KEY=VALUE line: ${trimmed}`);
    settings[match[1]!] = match[2]!;
  });
  return settings;
}

/** SERVER_SETTINGS_FILE's settings. */
export function serverSettings(): Record<string, string> {
  return parseEnvFile(readFileSync(SERVER_SETTINGS_FILE, 'utf8'), SERVER_SETTINGS_FILE);
}

/** Where this cluster's PostgreSQL is, as the template and the schema script read it. */
export function databaseEnvironment(postgresPort: number, password: string): Record<string, string> {
  return {
    ...serverSettings(),
    POSTGRES_SEEDS: '127.0.0.1',
    DB_PORT: String(postgresPort),
    POSTGRES_USER: DATABASE_ROLE,
    POSTGRES_PWD: password,
  };
}

/**
 * The environment of every service process: the shared settings, the database, each service's
 * ports (all on its host, 127.0.0.1 unless started with another; the cluster record in PostgreSQL
 * names the frontend's), the dynamic config. PostgreSQL stays on 127.0.0.1.
 */
export function serviceEnvironment(state: ClusterState, password: string): Record<string, string> {
  const { frontend, history, matching, worker } = state.services;
  return {
    ...databaseEnvironment(state.postgresPort, password),
    BIND_ON_IP: serviceHost(state),
    FRONTEND_GRPC_PORT: String(frontend.grpcPort),
    FRONTEND_MEMBERSHIP_PORT: String(frontend.membershipPort),
    FRONTEND_HTTP_PORT: String(state.frontendHttpPort),
    HISTORY_GRPC_PORT: String(history.grpcPort),
    HISTORY_MEMBERSHIP_PORT: String(history.membershipPort),
    MATCHING_GRPC_PORT: String(matching.grpcPort),
    MATCHING_MEMBERSHIP_PORT: String(matching.membershipPort),
    WORKER_GRPC_PORT: String(worker.grpcPort),
    WORKER_MEMBERSHIP_PORT: String(worker.membershipPort),
    DYNAMIC_CONFIG_FILE_PATH: DYNAMIC_CONFIG_FILE,
  };
}
