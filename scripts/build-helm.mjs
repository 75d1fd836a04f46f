#!/usr/bin/env node
// Builds Helm from the Go module proxy into .tools/helm/<version>/ and prints the program's path:
// the chart's test (test/unit/helm-chart.test.ts) lints and renders deploy/helm/durable-agent with it.
// The tests' global setup (test/support/test-servers.ts) runs it before any test starts.
// `--missing` prints (as JSON) which commands a build would lack, building nothing; `--find` prints
// the program's path when it is built, and nothing when it is not.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { goBuild, isExecutable, missingForBuild } from './go-build.mjs';

export const HELM_VERSION = '3.22.0';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const target = path.join(root, '.tools', 'helm', HELM_VERSION);
export const HELM_PROGRAM = path.join(target, 'helm');

export const isBuilt = () => isExecutable(HELM_PROGRAM);

/** The program's path, building it first when it is not there yet. */
export async function buildHelm({ log = (line) => console.error(line) } = {}) {
  await goBuild({
    what: `Helm ${HELM_VERSION}`,
    target,
    programs: [
      {
        pkg: 'helm.sh/helm/v3/cmd/helm',
        version: `v${HELM_VERSION}`,
        installedAs: 'helm',
        file: 'helm',
        // `helm version` says which release it is; `go install` alone would leave it "v3.x-dev".
        env: { GOFLAGS: `-ldflags=-X=helm.sh/helm/v3/internal/version.version=v${HELM_VERSION}` },
      },
    ],
    isBuilt,
    log,
  });
  return HELM_PROGRAM;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const mode = process.argv[2];
    if (mode === '--missing') console.log(JSON.stringify(missingForBuild(isBuilt())));
    else if (mode === '--find') console.log(isBuilt() ? HELM_PROGRAM : '');
    else console.log(await buildHelm());
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
