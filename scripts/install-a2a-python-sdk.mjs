#!/usr/bin/env node
// Installs PyPI's a2a-sdk, the Python A2A SDK (A2A 1.0's JSON-RPC binding), into a virtual
// environment of its own in .tools/a2a-sdk/<version>/, and prints the path of its Python: the A2A
// tests (test/integration/a2a.test.ts) run test/fixtures/a2a-python-peer.py with it, a Python
// caller of the gateway. The tests' global setup (test/support/test-servers.ts) runs it before any
// test starts. Needs python3 with its venv module (Debian: apt-get install python3-venv).
// `--missing` prints (as JSON) what an install would lack, installing nothing; `--find` prints the
// Python's path when it is installed, and nothing when it is not.
import { isMain, pythonVenv } from './python-venv.mjs';

export const A2A_PYTHON_SDK_VERSION = '1.3.0';
const venv = pythonVenv({
  name: 'a2a-sdk',
  version: A2A_PYTHON_SDK_VERSION,
  requirement: `a2a-sdk==${A2A_PYTHON_SDK_VERSION}`,
  takes: 'seconds',
  probe: ['-c', 'import a2a.client, a2a.helpers.proto_helpers'],
});
export const A2A_PYTHON = venv.python;
export const { isInstalled, missingForInstall } = venv;
export const installA2APythonSdk = ({ log } = {}) => venv.install({ log });

if (isMain(import.meta.url)) await venv.main();
