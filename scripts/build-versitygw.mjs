#!/usr/bin/env node
// Builds versitygw, an S3 server over a directory, from the Go module proxy into
// .tools/versitygw/<version>/ and prints the program's path: the S3 blob store's tests run against it.
// `--missing` prints (as JSON) which commands a build would lack, building nothing.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { goBuild, isExecutable, missingForBuild } from './go-build.mjs';

export const VERSITYGW_VERSION = '1.8.0';
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const target = path.join(root, '.tools', 'versitygw', VERSITYGW_VERSION);
const program = path.join(target, 'versitygw');
const isBuilt = () => isExecutable(program);

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    if (process.argv[2] === '--missing') console.log(JSON.stringify(missingForBuild(isBuilt())));
    else {
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
        log: (line) => console.error(line),
      });
      console.log(program);
    }
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
