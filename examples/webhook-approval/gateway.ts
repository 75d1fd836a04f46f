// The HTTP gateway, run as the package's CLI does it (`durable-agent gateway`): the package exports
// no way to start it in-process. One token, whose name is the identity its decisions are made as.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export async function startGateway(options: { temporalAddress: string; name: string; token: string }) {
  const tokens = path.join(await mkdtemp(path.join(os.tmpdir(), 'gateway-')), 'tokens.json');
  // This token may only decide approvals, and only of conversations whose ids start with `deploy-`.
  const entry = {
    name: options.name,
    token: options.token,
    actions: ['approve'],
    conversationPrefixes: ['deploy-'],
  };
  await writeFile(tokens, JSON.stringify({ tokens: [entry] }));
  const cli = path.join(path.dirname(require.resolve('durable-agent/package.json')), 'dist/cli/cli.js');
  const child = spawn(process.execPath, [cli, 'gateway', '--tokens', tokens, '--port', '0'], {
    env: { ...process.env, TEMPORAL_ADDRESS: options.temporalAddress },
    stdio: ['ignore', 'inherit', 'pipe'],
  });
  process.once('exit', () => child.kill()); // not left running when this program stops early
  // Its log goes to stderr; the line `gateway listening on <url>` says it is ready.
  const url = await new Promise<string>((resolve, reject) => {
    let log = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      const ready = /gateway listening on (\S+)/.exec(log);
      if (ready) resolve(ready[1]!);
    });
    child.once('exit', (code) => reject(new Error(`the gateway exited (${code}):\n${log}`)));
    setTimeout(() => reject(new Error(`the gateway did not start in 30 s:\n${log}`)), 30_000).unref();
  });
  return {
    url,
    async close() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
