#!/usr/bin/env node
// Builds Temporal's Web UI server (github.com/temporalio/ui-server, the UI the Temporal CLI's dev
// server embeds) from the Go module proxy into .tools/temporal-ui-server/<version>/, and prints that
// directory. The embedded Temporal server (src/temporal-server/dev-server.ts) runs it beside itself when it
// serves a Web UI. Safe to run by hand or by several processes at once; needs `go` only to build.
//
// ui-server's own go.mod cannot be installed as it stands (`go install ...@v2.58.1`): it asks for
// Go 1.26.10, and for versions of two modules (go.temporal.io/api v1.64.0, echo v4.16.1) the module
// proxy does not serve. So it is built inside a wrapper module that names versions the proxy has, with
// the toolchain it asks for fetched by Go itself (GOTOOLCHAIN). The wrapper's go.mod and go.sum stay
// beside the program, a record of exactly what was built.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { goBuild, isExecutable, missingForBuild, runGo } from './go-build.mjs';

export const TEMPORAL_UI_VERSION = '2.58.1';
const MODULE = 'github.com/temporalio/ui-server/v2';
/** The Go toolchain ui-server's go.mod asks for; the module proxy serves it. */
const GO_TOOLCHAIN = 'go1.27.3';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const TEMPORAL_UI_DIR = path.join(root, '.tools', 'temporal-ui-server', TEMPORAL_UI_VERSION);
export const UI_SERVER_BINARY = 'ui-server';
/** Where the wrapper module is, relative to the built directory. */
const WRAPPER = 'module';

const GO_MOD = `module durable-agent/ui-server-build

go 1.26

require (
	${MODULE} v${TEMPORAL_UI_VERSION}
	// v1.64.0, which ui-server asks for, is not on the module proxy.
	go.temporal.io/api v1.64.1
)

// v4.16.1, which ui-server asks for, is not on the module proxy; v4.16.0 is.
replace github.com/labstack/echo/v4 => github.com/labstack/echo/v4 v4.16.0
`;

const TOOLS_GO = `//go:build tools

// Package tools only makes the UI server's command a dependency of this module.
package tools

import _ "${MODULE}/cmd/server"
`;

const GO_ENV = { GOTOOLCHAIN: GO_TOOLCHAIN, GOFLAGS: '-mod=mod' };

export function isBuilt() {
  return isExecutable(path.join(TEMPORAL_UI_DIR, UI_SERVER_BINARY));
}

/** The commands a build would need and PATH lacks: none once built. */
export function missingCommands({ built = isBuilt() } = {}) {
  return missingForBuild(built);
}

/** The built directory, building it first when it is not there yet. */
export function buildTemporalUiServer({ log = (line) => console.error(line) } = {}) {
  return goBuild({
    what: `Temporal Web UI server ${TEMPORAL_UI_VERSION}`,
    target: TEMPORAL_UI_DIR,
    programs: [
      {
        pkg: `${MODULE}/cmd/server`,
        installedAs: 'server',
        file: UI_SERVER_BINARY,
        moduleDir: (scratch) => path.join(scratch, WRAPPER),
        env: GO_ENV,
      },
    ],
    isBuilt,
    prepare: writeWrapperModule,
    log,
  });
}

/** The wrapper module, its go.sum filled in by `go mod tidy`. */
async function writeWrapperModule(scratch) {
  const dir = path.join(scratch, WRAPPER);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'go.mod'), GO_MOD);
  await writeFile(path.join(dir, 'tools.go'), TOOLS_GO);
  await runGo(['mod', 'tidy'], GO_ENV, { cwd: dir });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    console.log(
      process.argv[2] === '--missing' ? JSON.stringify(missingCommands()) : await buildTemporalUiServer(),
    );
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
