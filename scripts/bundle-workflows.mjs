// Bundles the compiled workflows once at build time, so starting a worker does not run webpack.
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
// The compiled helper, so this bundle is built with the same options as every other one.
const { bundleAgentWorkflows, PREBUILT_BUNDLE } = require(
  path.join(root, 'dist', 'worker', 'workflow-bundle.js'),
);
await writeFile(PREBUILT_BUNDLE, await bundleAgentWorkflows());
