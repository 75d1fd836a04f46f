#!/usr/bin/env node
// Runs a reduced test suite on each current Node LTS line besides the one running npm test: the
// unit and replay tests, and the integration tests that load what differs between Node versions
// (the Temporal core bridge, the ACP SDK's ES modules through require, the built CLI). Node's
// binaries come from the npm registry into .tools/node/<version>/ (node-binary.mjs).
// Usage: node scripts/test-on-lts.mjs [VERSION...]   (default: LTS_VERSIONS)
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeBinary } from './node-binary.mjs';

/** The newest release of each LTS line the registry serves that this project is tested on. */
export const LTS_VERSIONS = ['22.23.3', '24.21.0'];

const REDUCED_SUITE = [
  'test/unit',
  'test/replay',
  'test/integration/conversation.test.ts',
  'test/integration/acp.test.ts',
  'test/integration/cli.test.ts',
];

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Jest under `node`, with that node first on PATH so every process the tests start runs on it too. */
function jestOn(node) {
  return new Promise((resolve) => {
    const child = spawn(node, [path.join(root, 'node_modules', 'jest', 'bin', 'jest.js'), ...REDUCED_SUITE], {
      cwd: root,
      stdio: 'inherit',
      env: { ...process.env, PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ''}` },
    });
    child.on('close', (code) => resolve(code ?? 1));
  });
}

const versions = process.argv.slice(2).length > 0 ? process.argv.slice(2) : LTS_VERSIONS;
const failed = [];
for (const version of versions) {
  const node = await nodeBinary(version);
  console.error(`\n== the reduced suite on Node ${version} (${os.platform()} ${os.arch()})`);
  if ((await jestOn(node)) !== 0) failed.push(version);
}
if (failed.length > 0) {
  console.error(`the reduced suite failed on Node ${failed.join(', ')}`);
  process.exit(1);
}
