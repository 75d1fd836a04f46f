import path from 'node:path';
import { parseArgs } from 'node:util';
import { connectionSettingsFromEnv } from '../../client/connection-settings-from-env';
import { type Cleanups, log } from '../cleanups';

/** `server`: the embedded Temporal server in the foreground until stopped. */
export async function serverCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { port: { type: 'string' }, 'ui-port': { type: 'string' }, db: { type: 'string' } },
  });
  const [{ embeddedServerSettings, startEmbeddedServer }, { startCodecServerFor }] = await Promise.all([
    import('../../temporal-server/ensure-server'),
    import('../embedded-codec-server'),
  ]);
  const env = {
    ...process.env,
    ...(values.port ? { DURABLE_AGENT_SERVER_PORT: values.port } : {}),
    ...(values['ui-port'] ? { DURABLE_AGENT_UI_PORT: values['ui-port'] } : {}),
  };
  const embedded = embeddedServerSettings(env);
  if (values.db) embedded.dbFile = path.resolve(values.db);
  const server = await startEmbeddedServer(
    embedded,
    connectionSettingsFromEnv(env, log).namespace,
    log,
    (pid) => startCodecServerFor(pid, embedded, env),
  );
  cleanups.last(() => server.stop());
  log(`Temporal server ready on ${server.address}; Ctrl-C stops it`);
  await new Promise(() => {});
  return 0;
}
