import { isIPv4 } from 'node:net';
import path from 'node:path';
import type { ClusterStatus } from '../../temporal-server/cluster/cluster';
import { type Cleanups, log } from '../cleanups';
import { namedPositionals, parseCommandArgs, positiveInteger } from '../parse-command-args';
import { UsageError } from '../usage-error';

export type ClusterArgs =
  | { action: 'start'; dir: string; port?: number; host?: string; tls?: boolean }
  | { action: 'stop'; dir: string }
  | { action: 'status'; dir: string; json: boolean };

export function parseClusterArgs(args: string[], defaultDir: string): ClusterArgs {
  const { values, positionals } = parseCommandArgs('cluster', {
    args,
    allowPositionals: true,
    options: {
      dir: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      json: { type: 'boolean', default: false },
      tls: { type: 'boolean', default: false },
      'no-tls': { type: 'boolean', default: false },
    },
  });
  const { ACTION: action } = namedPositionals('cluster', positionals, ['ACTION'] as const);
  const dir = path.resolve(values.dir ?? defaultDir);
  if (action !== 'start' && values.port !== undefined) throw new UsageError('cluster: --port is for start');
  if (action !== 'start' && values.host !== undefined) throw new UsageError('cluster: --host is for start');
  if (action !== 'status' && values.json) throw new UsageError('cluster: --json is for status');
  if (action !== 'start' && (values.tls || values['no-tls']))
    throw new UsageError('cluster: --tls is for start');
  if (values.tls && values['no-tls']) throw new UsageError('cluster: --tls or --no-tls, not both');
  const tls = values.tls ? true : values['no-tls'] ? false : undefined;
  if (action === 'start') {
    const port = positiveInteger(values.port, '--port');
    if (port !== undefined && port > 65_535) throw new UsageError(`--port takes a port number, got ${port}`);
    const host = values.host;
    // Temporal's services bind this address and tell each other it: one address of this machine.
    if (host !== undefined && (!isIPv4(host) || host === '0.0.0.0'))
      throw new UsageError(`--host takes an IPv4 address of this machine, got ${JSON.stringify(host)}`);
    return {
      action,
      dir,
      ...(port !== undefined ? { port } : {}),
      ...(host !== undefined ? { host } : {}),
      ...(tls !== undefined ? { tls } : {}),
    };
  }
  if (action === 'stop') return { action, dir };
  if (action === 'status') return { action, dir, json: values.json };
  throw new UsageError(`cluster takes start, stop or status, not ${JSON.stringify(action)}`);
}

/**
 * `cluster start|stop|status`: a self-hosted Temporal cluster on this machine (PostgreSQL and the
 * four services as processes of their own). `start` prints only the frontend's address on stdout,
 * so `TEMPORAL_ADDRESS=$(durable-agent cluster start)` works; `status` exits 1 when a part is down.
 */
export async function clusterCommand(args: string[], _cleanups: Cleanups): Promise<number> {
  const cluster = await import('../../temporal-server/cluster/cluster');
  const { defaultClusterDir } = await import('../../temporal-server/cluster/cluster-files');
  const parsed = parseClusterArgs(args, defaultClusterDir(process.env));
  const options = { dir: parsed.dir, env: process.env, log };
  switch (parsed.action) {
    case 'start': {
      const address = await cluster.startCluster({
        ...options,
        port: parsed.port,
        host: parsed.host,
        tls: parsed.tls,
      });
      process.stdout.write(`${address}\n`);
      return 0;
    }
    case 'stop':
      await cluster.stopCluster(options);
      return 0;
    case 'status': {
      const status = await cluster.clusterStatus(parsed.dir);
      if (!status) {
        if (parsed.json) process.stdout.write(`${JSON.stringify({ dir: parsed.dir, exists: false })}\n`);
        else log(`No cluster in ${parsed.dir}: durable-agent cluster start --dir ${parsed.dir} makes one.`);
        return 1;
      }
      process.stdout.write(parsed.json ? `${JSON.stringify(status)}\n` : formatClusterStatus(status));
      return status.healthy ? 0 : 1;
    }
  }
}

export function formatClusterStatus(status: ClusterStatus): string {
  const rows = status.processes.map((process) => [
    process.name,
    process.pid !== undefined ? `pid ${process.pid}` : 'no pid',
    process.running ? 'running' : 'down',
    `${process.host}:${process.port}` +
      (process.membershipPort ? ` (membership ${process.membershipPort})` : ''),
    process.log,
  ]);
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const lines = rows.map(
    (row) =>
      `  ${row
        .map((cell, column) => cell.padEnd(widths[column]!))
        .join('  ')
        .trimEnd()}`,
  );
  const frontend = status.frontend.serving ? 'serving' : `not serving (${status.frontend.detail})`;
  return [
    `Temporal cluster in ${status.dir}: ${status.healthy ? 'up' : 'not all up'}`,
    `  frontend ${status.address}: ${frontend}`,
    ...(status.profile ? [`  mTLS only: clients connect with ${status.profile}`] : []),
    ...lines,
    '',
  ].join('\n');
}
