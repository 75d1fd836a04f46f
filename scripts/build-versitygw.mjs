#!/usr/bin/env node
// Builds versitygw, an S3 server over a directory, from the Go module proxy into
// .tools/versitygw/<version>/ and prints the program's path: the S3 blob store's tests run against it.
// The tests' global setup (test/support/test-servers.ts) runs it before any test starts.
// `--missing` prints (as JSON) which commands a build would lack, building nothing; `--find` prints
// the program's path when it is built, and nothing when it is not.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { goBuild, isExecutable, missingForBuild } from './go-build.mjs';

export const VERSITYGW_VERSION = '1.8.0';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const target = path.join(root, '.tools', 'versitygw', VERSITYGW_VERSION);
export const VERSITYGW_PROGRAM = path.join(target, 'versitygw');

export const isBuilt = () => isExecutable(VERSITYGW_PROGRAM);

/** The program's path, building it first when it is not there yet. */
export async function buildVersitygw({ log = (line) => console.error(line) } = {}) {
  await goBuild({
    what: `versitygw ${VERSITYGW_VERSION}`,
    target,
    programs: [
      {
        pkg: 'github.com/versity/versitygw/cmd/versitygw',
        version: `v${VERSITYGW_VERSION}`,
        installedAs: 'versitygw',
        file: 'versitygw',
      },
    ],
    isBuilt,
    log,
  });
  return VERSITYGW_PROGRAM;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const mode = process.argv[2];
    if (mode === '--missing') console.log(JSON.stringify(missingForBuild(isBuilt())));
    else if (mode === '--find') console.log(isBuilt() ? VERSITYGW_PROGRAM : '');
    else console.log(await buildVersitygw());
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
