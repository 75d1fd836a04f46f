import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import path from 'node:path';
import type { EmbeddedServerSettings } from '../temporal-server/ensure-server';
import { childEnvironment } from '../tools/exec/child-environment';
import { dataConverterVariables } from '../worker/data-converter';

/**
 * The Web UI's codec server for an embedded server: `codec-server` of this CLI, in a process of
 * its own that lives as long as the server does (which may outlive this process). If one already
 * listens on the port, the new one exits at once.
 */
export function startCodecServerFor(
  serverPid: number,
  embedded: EmbeddedServerSettings,
  env: NodeJS.ProcessEnv,
): void {
  // Under a TypeScript loader (tests) the CLI is its source; built, it is the JavaScript beside this file.
  const cli = path.join(__dirname, __filename.endsWith('.ts') ? 'cli.ts' : 'cli.js');
  const loader = __filename.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const out = openSync(path.join(path.dirname(embedded.dbFile), 'codec-server.log'), 'a', 0o600);
  const child = spawn(
    process.execPath,
    [...loader, cli, 'codec-server', '--port', String(embedded.codecPort), '--exit-with', String(serverPid)],
    {
      env: codecServerEnvironment(env, embedded),
      detached: true,
      stdio: ['ignore', out, out],
    },
  );
  closeSync(out);
  child.unref();
}

/**
 * What the codec server is given of this process's environment: what a shell needs, the payload
 * codec's and blob store's settings, the browser origins it serves. Never the model's key, the RAP
 * secret or other credentials it has no use for.
 */
export function codecServerEnvironment(
  env: NodeJS.ProcessEnv,
  embedded: Pick<EmbeddedServerSettings, 'uiPort'>,
): Record<string, string> {
  return {
    ...childEnvironment(env, [
      ...dataConverterVariables(env),
      'DURABLE_AGENT_CODEC_ORIGINS',
      'NODE_EXTRA_CA_CERTS',
    ]),
    DURABLE_AGENT_UI_PORT: String(embedded.uiPort),
  };
}
