import { processAlive } from '../../platform/process-alive';
import { parseCommandArgs } from '../parse-command-args';
import { type Cleanups, log } from '../cleanups';
import { UsageError } from '../usage-error';

/**
 * `codec-server`: Temporal's remote codec endpoint for the Web UI and `temporal` CLI, decoding the
 * payloads durable-agent compresses or keeps in the blob store (the same settings as the workers).
 * `--exit-with PID` ends it with that process (the embedded server starts one this way).
 */
export async function codecServerCommand(args: string[], cleanups: Cleanups): Promise<number> {
  const { values } = parseCommandArgs('codec-server', {
    args,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'ui-origin': { type: 'string', multiple: true },
      'exit-with': { type: 'string' },
    },
  });
  const [{ startCodecServer }, { agentDataConverter }, { embeddedServerSettings }] = await Promise.all([
    import('../../temporal-server/codec-server'),
    import('../../worker/data-converter'),
    import('../../temporal-server/ensure-server'),
  ]);
  const embedded = embeddedServerSettings(process.env);
  const port = values.port !== undefined ? Number(values.port) : embedded.codecPort;
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new UsageError(`--port takes a port number, not ${values.port}`);
  const origins =
    values['ui-origin'] ??
    (process.env.DURABLE_AGENT_CODEC_ORIGINS?.split(',')
      .map((origin) => origin.trim())
      .filter(Boolean) || [`http://127.0.0.1:${embedded.uiPort}`, `http://localhost:${embedded.uiPort}`]);
  const [codec] = agentDataConverter(process.env).payloadCodecs ?? [];
  const server = await startCodecServer({
    codec: codec!,
    host: values.host ?? '127.0.0.1',
    port,
    allowedOrigins: origins,
  });
  cleanups.last(() => server.close());
  log(`codec server on ${server.url} for ${origins.join(', ')}; Ctrl-C stops it`);
  const owner = values['exit-with'] !== undefined ? Number(values['exit-with']) : undefined;
  await new Promise<void>((resolve) => {
    if (owner === undefined) return;
    const timer = setInterval(() => {
      if (processAlive(owner)) return;
      clearInterval(timer);
      resolve();
    }, 2_000);
  });
  return 0;
}
